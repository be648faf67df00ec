// The outcome of the last action: polite for success, an alert for errors.
export interface ActionState {
  isPending: boolean;
  isSuccess: boolean;
  error: unknown;
  data?: unknown;
}

export function ActionResult({ action }: { action: ActionState }) {
  if (action.isPending) {
    return <p className="progress" role="status">Working…</p>;
  }
  if (action.error) {
    return <p className="error" role="alert">{(action.error as Error).message}</p>;
  }
  const text = action.isSuccess && typeof action.data === "string" ? action.data : "";
  return <p className={text ? "ok" : "sr-only"} role="status">{text}</p>;
}
