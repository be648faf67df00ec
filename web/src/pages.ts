// The pages of Settings > Integrations, in navigation order. To add a page: make a folder
// src/pages/<name>/ with its <Name>Page.tsx (one component per file, its CSS beside it) and add an entry
// here; the navigation, the document title, focus on arrival and the admin-only guard come with it.
import type { ComponentType } from "react";
import { ApiKeysPage } from "./pages/api-keys/ApiKeysPage.tsx";
import { PaymentWebhooksPage } from "./pages/payments/PaymentWebhooksPage.tsx";
import { WebhookLogsPage } from "./pages/logs/WebhookLogsPage.tsx";
import { WebhooksPage } from "./pages/webhooks/WebhooksPage.tsx";
import { ErasePersonPage } from "./pages/erase/ErasePersonPage.tsx";
import { PeoplePage } from "./pages/people/PeoplePage.tsx";
import { ConnectionsPage } from "./pages/connections/ConnectionsPage.tsx";
import { OrganizationPage } from "./pages/organization/OrganizationPage.tsx";
import { NewOrganizationPage } from "./pages/organization/NewOrganizationPage.tsx";
import { NEW_ORGANIZATION_PATH, ORGANIZATION_PATH } from "./pages/organization/paths.ts";
import { AuditLogPage } from "./pages/audit/AuditLogPage.tsx";
import { PlatformConsolePage } from "./pages/platform/PlatformConsolePage.tsx";

export interface PageEntry {
  path: string;
  title: string;
  Page: ComponentType;
  /** Query parameters that name one organization's rows: dropped when the organization changes. */
  orgParams?: readonly string[];
  /** What staff are told instead of the page (default: that webhook settings are for administrators). */
  forAdmins?: { heading: string; text: string };
  /**
   * Who may open it: administrators of the active organization (the default), any member of it, or
   * anyone signed in, with or without an organization.
   */
  access?: "admin" | "member" | "signed_in";
  /** false: reached from elsewhere (a link or the header), not listed in the navigation. */
  nav?: boolean;
  /**
   * "platform": a page of the platform console, for platform administrators whatever organization they
   * are in (or none); listed apart, and shown only when the token says is_platform_admin.
   */
  scope?: "platform";
}

export const PLATFORM_CONSOLE_PATH = "/settings/platform/organizations";

export const PAGES: readonly PageEntry[] = [
  {
    path: "/settings/integrations/webhooks",
    title: "Webhooks",
    Page: WebhooksPage,
  },
  {
    path: "/settings/integrations/webhook-logs",
    title: "Webhook Logs",
    Page: WebhookLogsPage,
    orgParams: ["endpoint", "delivery", "q"],
  },
  {
    path: "/settings/integrations/api-keys",
    title: "API keys",
    Page: ApiKeysPage,
  },
  {
    path: "/settings/integrations/connections",
    title: "Connections",
    Page: ConnectionsPage,
  },
  {
    path: "/settings/integrations/payment-webhooks",
    title: "Payment webhooks",
    Page: PaymentWebhooksPage,
  },
  {
    path: "/settings/people",
    title: "People",
    Page: PeoplePage,
    forAdmins: {
      heading: "People are managed by administrators",
      text:
        "Inviting people, changing their roles and removing them is for the organization's administrators; " +
        "ask one of them.",
    },
  },
  {
    path: "/settings/privacy/erase-person",
    title: "Erase a person",
    Page: ErasePersonPage,
  },
  {
    path: ORGANIZATION_PATH,
    title: "Organization",
    Page: OrganizationPage,
    access: "member",
  },
  {
    path: NEW_ORGANIZATION_PATH,
    title: "New organization",
    Page: NewOrganizationPage,
    access: "signed_in",
    nav: false,
  },
  {
    path: "/settings/organization/audit-log",
    title: "Audit log",
    Page: AuditLogPage,
    forAdmins: {
      heading: "The audit log is for administrators",
      text: "It shows what the platform's administrators did to the organization; ask an administrator.",
    },
  },
  {
    path: PLATFORM_CONSOLE_PATH,
    title: "Platform console",
    Page: PlatformConsolePage,
    scope: "platform",
    access: "signed_in",
  },
];

export const HOME = PAGES[0]!.path;
