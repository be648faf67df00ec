// A delivery's details have their own address (?delivery=<id>): beside the list on a wide screen, a view
// of their own on a narrow one (the list is hidden meanwhile). Opening and closing keep the list where it
// was: the scroll position is kept on the way in and given back on the way out.
import { setQuery } from "../../router.tsx";

/** Narrow: the details replace the list (WebhookLogsPage.css says the same width). */
export const NARROW = "(max-width: 1099.98px)";
let listScroll = 0;

export function openDelivery(id: string): void {
  listScroll = globalThis.scrollY;
  setQuery({ delivery: id });
}

/** Back to the list, at the place it was left. */
export function closeDelivery(): void {
  setQuery({ delivery: null });
  const y = listScroll;
  requestAnimationFrame(() => globalThis.scrollTo(0, y));
}
