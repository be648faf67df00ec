// The event catalogue, the one list of event types an endpoint can subscribe to, with an example body in
// exactly the shape the triggers produce; the OpenAPI document, the UI's types and the database's
// private.webhook_event_types() derive from it. It lives here rather than in SQL because the API needs
// it before any database is reached (to validate input and generate the OpenAPI document).
// @see docs/development.md#add-an-event-type

const ORG = "5f0c2a1e-8d3b-4c6f-9a27-1b3e4d5f6a70";
const MEMBER = "0d9e8f7a-6b5c-4d3e-8f2a-1b0c9d8e7f6a";
const AT = "2026-11-22T10:15:30.123456+00:00";

const member = {
  id: MEMBER,
  organization_id: ORG,
  first_name: "Grace",
  last_name: "Hopper",
  email: "grace@example.org",
  primary_phone: "+1 (555) 010-2030",
  primary_phone_normalized: "15550102030",
  status: "active",
  source: "visitor_form",
  created_at: AT,
  updated_at: AT,
};

const donation = {
  id: "7c6b5a49-3827-4165-9e8d-7c6b5a493827",
  organization_id: ORG,
  member_id: MEMBER,
  recurring_donation_id: null,
  amount_minor: 2500,
  currency: "USD",
  source: "online",
  gateway_payment_id: "pay_Nq3xYz12AbCd",
  donated_at: AT,
  created_at: AT,
  refunded_minor: 0,
  refund_status: "none",
};

const attendance = {
  id: "2b3c4d5e-6f70-4812-9a3b-4c5d6e7f8091",
  organization_id: ORG,
  member_id: MEMBER,
  service_date: "2026-11-22",
  service_name: "Sunday 10am",
  created_at: AT,
};

const workflowRun = {
  id: "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d",
  organization_id: ORG,
  workflow_id: "3e4f5a6b-7c8d-4e9f-8a0b-1c2d3e4f5a6b",
  member_id: MEMBER,
  status: "completed",
  started_at: "2026-11-21T09:00:00+00:00",
  finished_at: AT,
};

const disabledEndpoint = {
  id: "4d5e6f70-8192-4a3b-9c4d-5e6f70819a2b",
  url: "https://crm.example.org/hooks/church",
  description: "CRM sync",
  enabled: false,
  disabled_reason: "every attempt failed for 5 days: 212 failed attempts in a row since 2026-11-17T10:15:30Z",
  disabled_at: AT,
};

const failingEndpoint = {
  id: "4d5e6f70-8192-4a3b-9c4d-5e6f70819a2b",
  url: "https://crm.example.org/hooks/church",
  description: "CRM sync",
  enabled: true,
  failing_since: "2026-11-22T09:10:00.5+00:00",
  consecutive_failures: 14,
  last_response_status: 503,
  disable_at: "2026-11-27T09:10:00.5+00:00",
};

const recoveredEndpoint = {
  id: failingEndpoint.id,
  url: failingEndpoint.url,
  description: failingEndpoint.description,
  enabled: true,
  failing_since: failingEndpoint.failing_since,
  recovered_at: AT,
  last_response_status: 200,
};

function body(type: string, id: string, row: Record<string, unknown>, delta: Record<string, unknown>) {
  return { id, type, created_at: AT, organization_id: ORG, data: { row, delta } };
}

export const EVENT_CATALOGUE = {
  "member.created": {
    description:
      "Someone is added as a member: by hand, in bulk or through the visitor form. The message carries " +
      "their details.",
    example: body("member.created", "e1a2b3c4-d5e6-4f70-8192-a3b4c5d6e7f8", member, member),
    table: "members",
    fires:
      "A row is inserted into `members`: added by hand, in bulk, through the visitor form or an import. " +
      "A bulk insert of 1,000 members raises 1,000 events in the same statement.",
  },
  "member.lost": {
    description: "A member is marked as lost. The message carries their details and what changed.",
    example: body(
      "member.lost",
      "e2b3c4d5-e6f7-4081-92a3-b4c5d6e7f809",
      { ...member, status: "lost" },
      { status: "lost", updated_at: AT },
    ),
    table: "members",
    fires: "A member's `status` changes to `lost`. No other update of a member raises an event.",
  },
  "donation.recorded": {
    description:
      "A donation is recorded: entered by hand, given online, or a recurring gift's charge. The message " +
      "carries the gift, its amount and who gave it.",
    example: body("donation.recorded", "e3c4d5e6-f708-4192-a3b4-c5d6e7f8091a", donation, donation),
    table: "donations",
    fires:
      "A row is inserted into `donations`: recorded by hand, an online one-off payment, or a charge of " +
      "a recurring donation. Amounts are in minor units (`2500` USD is $25.00); a later refund changes " +
      "`refunded_minor` and `refund_status` but raises no event.",
  },
  "attendance.marked": {
    description: "Someone's attendance is marked. The message says who and when.",
    example: body("attendance.marked", "e4d5e6f7-0819-42a3-b4c5-d6e7f8091a2b", attendance, attendance),
    table: "attendance",
    fires: "A row is inserted into `attendance`.",
  },
  "workflow.completed": {
    description: "A workflow finishes running, whether it completed or failed; the message says which.",
    example: body(
      "workflow.completed",
      "e5e6f708-192a-43b4-c5d6-e7f8091a2b3c",
      workflowRun,
      { status: "completed", finished_at: AT },
    ),
    table: "workflow_runs",
    fires: "A `workflow_runs` row reaches a finished state, `completed` or `failed` (inserted finished, or " +
      "updated to it); `cancelled` raises nothing. Failed runs raise it too, because a failed run has " +
      "finished and automations usually need to know: check `data.row.status`.",
  },
  "webhook.endpoint.disabled": {
    description: "We switched off another of your endpoints because every delivery to it failed for 5 " +
      "days, or it answered that it is gone (410). The message names that endpoint, never its secret.",
    example: body("webhook.endpoint.disabled", "e6f70819-2a3b-44c5-d6e7-f8091a2b3c4d", disabledEndpoint, {
      enabled: false,
      disabled_reason: disabledEndpoint.disabled_reason,
      disabled_at: AT,
    }),
    table: "webhook_endpoints",
    fires: "The system disabled one of the organization's endpoints: it answered `410 Gone`, or every " +
      "attempt failed for 5 days. It goes to the organization's other enabled endpoints subscribed to it; " +
      "an administrator's own disable sends none. `data.row` is that endpoint, never its secret.",
  },
  "webhook.endpoint.failing": {
    description: "Another of your endpoints has failed every attempt for an hour. The message names it " +
      "(never its secret), since when it fails, how many attempts failed in a row and its last answer.",
    example: body("webhook.endpoint.failing", "e7081920-3a4b-45c6-e7f8-091a2b3c4d5e", failingEndpoint, {
      failing_since: failingEndpoint.failing_since,
      consecutive_failures: failingEndpoint.consecutive_failures,
    }),
    table: "webhook_endpoints",
    fires: "One of the organization's enabled endpoints has failed every attempt for an hour (the same " +
      "threshold as the administrators' mail), once per run of failures. It goes to the organization's " +
      "other enabled endpoints subscribed to it, never to the failing endpoint itself, so an alert " +
      "endpoint that fails cannot alert itself in a loop. `data.row` is that endpoint, never its secret.",
  },
  "webhook.endpoint.recovered": {
    description: "An endpoint you were told was failing delivers again. The message names it (never its " +
      "secret) and when it recovered.",
    example: body("webhook.endpoint.recovered", "e8192a3b-4c5d-46e7-f809-1a2b3c4d5e6f", recoveredEndpoint, {
      recovered_at: AT,
    }),
    table: "webhook_endpoints",
    fires: "An endpoint about which a `webhook.endpoint.failing` event was raised answered an attempt " +
      "with a 2xx again (checked every minute). It goes to the same endpoints as the failing event: " +
      "the organization's other enabled endpoints subscribed to it.",
  },
} satisfies Record<
  string,
  {
    description: string;
    example: Record<string, unknown>;
    /** The table whose row is `data.row`. */
    table: string;
    /** When the event is raised, for the event's page of the docs (Markdown). */
    fires: string;
  }
>;

export type EventTypeName = keyof typeof EVENT_CATALOGUE;
export const EVENT_TYPES = Object.keys(EVENT_CATALOGUE) as [EventTypeName, ...EventTypeName[]];
