// "Show older …" buttons: the next page of a list, then focus on its first new row (its first button or
// link, else the row itself), so a keyboard continues where the list grew; the button may be gone by
// then (no older page), and focus must not fall to <body>.
import { focusSoon } from "./focusSoon.ts";

export async function loadMore(fetchNext: () => Promise<unknown>, rows: string): Promise<void> {
  const before = document.querySelectorAll(rows).length;
  await fetchNext();
  const firstNew = () => {
    const row = document.querySelectorAll<HTMLElement>(rows)[before];
    if (!row) return null;
    const inside = row.querySelector<HTMLElement>("button, a[href]");
    if (inside) return inside;
    row.tabIndex = -1;
    return row;
  };
  // No new row (nothing older after all): the last row.
  focusSoon(firstNew, () => {
    const all = document.querySelectorAll<HTMLElement>(rows);
    const last = all[all.length - 1];
    if (last) last.tabIndex = -1;
    return last;
  });
}
