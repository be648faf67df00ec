/** An error worth showing beside a status: not when it only repeats the status ("HTTP 500"). */
export function errorBeside(
  status: number | null,
  error: string | null,
): string | null {
  if (!error) return null;
  return status !== null && error === `HTTP ${status}` ? null : error;
}
