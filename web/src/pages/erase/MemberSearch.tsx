// Finding the member to erase: by e-mail, phone or name, within the organization.
import { useQuery } from "@tanstack/react-query";
import { useId, useState } from "react";
import { api, unwrap } from "../../api/client.ts";
import { errorText } from "../../api/queries.ts";
import { useOrgKey } from "../../session.tsx";
import { Empty } from "../../ui/Empty.tsx";
import { ErrorBox } from "../../ui/ErrorBox.tsx";
import type { Candidate } from "./types.ts";

export function MemberSearch({ onPick }: { onPick(member: Candidate): void }) {
  const id = useId();
  const org = useOrgKey();
  const [q, setQ] = useState("");
  const [asked, setAsked] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const search = useQuery({
    queryKey: [org, "member-search", asked],
    queryFn: () =>
      unwrap(
        api.GET("/webhooks/members/search", {
          params: { query: { q: asked! } },
        }),
      ).then((r) => r.data),
    enabled: asked !== null,
  });
  const results = asked === null ? null : search.data;
  return (
    <section className="panel" aria-labelledby={`${id}-t`}>
      <h2 id={`${id}-t`}>Find the person</h2>
      <form
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          if (q.trim().length < 2) {
            setError(
              "Type at least 2 characters of an e-mail address, a phone number or a name.",
            );
            return;
          }
          setError(null);
          setAsked(q.trim());
        }}
      >
        <label htmlFor={`${id}-q`}>E-mail, phone or name</label>
        <div className="row">
          <input
            id={`${id}-q`}
            type="search"
            value={q}
            maxLength={200}
            aria-invalid={error ? true : undefined}
            aria-describedby={error ? `${id}-err` : undefined}
            onChange={(e) => setQ(e.currentTarget.value)}
          />
          <button
            type="submit"
            className="primary"
            aria-disabled={search.isFetching || undefined}
          >
            {search.isFetching ? "Searching…" : "Search"}
          </button>
        </div>
        {error && <p id={`${id}-err`} className="field-error">{error}</p>}
        <p className="sr-only" role="status">
          {results ? `${results.length} matching member${results.length === 1 ? "" : "s"}` : ""}
        </p>
      </form>
      {search.error && (
        <ErrorBox
          error={`Could not search: ${errorText(search.error)}`}
          retry={() => void search.refetch()}
        />
      )}
      {results && results.length === 0 && (
        <Empty title="No member matches">
          <p>Only members of this organization are searched.</p>
        </Empty>
      )}
      {results && results.length > 0 && (
        <div
          className="table-wrap"
          role="region"
          aria-label="Matching members"
          tabIndex={0}
        >
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">E-mail</th>
                <th scope="col">Phone</th>
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {results.map((m) => (
                <tr key={m.id}>
                  <td>
                    {`${m.first_name} ${m.last_name}`.trim() || <span className="muted">(no name)</span>}
                  </td>
                  <td>{m.email ?? <span className="muted">—</span>}</td>
                  <td>{m.primary_phone ?? <span className="muted">—</span>}</td>
                  <td>
                    <button
                      type="button"
                      className="danger"
                      aria-label={`Erase ${
                        `${m.first_name} ${m.last_name}`.trim() || m.email ||
                        m.id
                      }`}
                      onClick={() => onPick(m)}
                    >
                      Erase…
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
