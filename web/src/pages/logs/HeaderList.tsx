// Headers of one attempt, names in order. Signature values arrive already cut to their first characters.
export function HeaderList(
  { title, headers, none }: {
    title: string;
    headers: Record<string, string> | null;
    none: string;
  },
) {
  const entries = Object.entries(headers ?? {}).sort(([a], [b]) => a.localeCompare(b));
  return (
    <details className="headers">
      <summary>{title}{entries.length ? ` (${entries.length})` : ""}</summary>
      {entries.length === 0 ? <p className="muted small">{none}</p> : (
        <dl>
          {entries.map(([name, value]) => (
            <div key={name}>
              <dt>
                <code>{name}</code>
              </dt>
              <dd>
                <code>{value}</code>
              </dd>
            </div>
          ))}
        </dl>
      )}
      {headers && Object.keys(headers).some((n) => n.includes("signature")) && (
        <p className="help">
          Signatures show only their first characters: the whole value is never stored.
        </p>
      )}
    </details>
  );
}
