// The webhook endpoints a person made (themselves or with an API key of theirs), shown before they are
// removed or step down: those endpoints send the church's data to URLs the person chose, so they are
// disabled with the person's authority unless another admin chooses to keep them. Someone leaving or
// stepping down is only told: keeping is another admin's decision.
import { useQuery } from "@tanstack/react-query";
import { useId } from "react";
import { api, unwrap } from "../../api/client.ts";
import { errorText } from "../../api/queries.ts";
import { useOrgKey } from "../../session.tsx";
import { ErrorBox } from "../../ui/ErrorBox.tsx";
import type { Person } from "./types.ts";

export function MadeEndpoints(
  { person, keep, onKeep, settled }: {
    person: Person;
    keep: boolean;
    onKeep?: (keep: boolean) => void;
    /** The removal is under way or done: their list is not asked for again (they are no member now). */
    settled: boolean;
  },
) {
  const org = useOrgKey();
  const id = useId();
  const endpoints = useQuery({
    queryKey: [org, "people", person.id, "endpoints"],
    queryFn: () =>
      unwrap(
        api.GET("/webhooks/people/{id}/endpoints", {
          params: { path: { id: person.id } },
        }),
      ).then((r) => r.data),
    refetchOnMount: "always",
    enabled: !settled,
  });
  if (endpoints.error) {
    return (
      <ErrorBox
        error={`Could not load the webhook endpoints they made: ${errorText(endpoints.error)}`}
        retry={() => void endpoints.refetch()}
      />
    );
  }
  const list = endpoints.data ?? [];
  if (list.length === 0) return null;
  const whose = person.you ? "you" : "they";
  return (
    <div className="made-endpoints">
      <p id={`${id}-list`}>
        Webhook endpoints {whose} made, which send this organization's data to these addresses:
      </p>
      <ul aria-labelledby={`${id}-list`}>
        {list.map((e) => (
          <li key={e.id}>
            <code className="endpoint-url">{e.url}</code>
            {e.description ? ` (${e.description})` : ""}
            {e.api_key_name ? ` — made with the API key “${e.api_key_name}”` : ""}
          </li>
        ))}
      </ul>
      {onKeep
        ? (
          <fieldset>
            <legend>These endpoints</legend>
            <label>
              <input
                type="radio"
                name={`${id}-keep`}
                checked={!keep}
                onChange={() => onKeep(false)}
              />{" "}
              Disable them (recommended): nothing more is sent; an admin can enable them again
            </label>
            <label>
              <input
                type="radio"
                name={`${id}-keep`}
                checked={keep}
                onChange={() => onKeep(true)}
              />{" "}
              Keep them sending
            </label>
          </fieldset>
        )
        : <p>They will be disabled; another admin can enable them again.</p>}
    </div>
  );
}
