export function Loading({ what }: { what: string }) {
  return <p className="progress" role="status">Loading {what}…</p>;
}
