// Gives focus back to where an action came from once the page has redrawn: the panel or form that had
// focus is gone by then, and focus must not fall to <body> (keyboard and screen-reader users would start
// over from the top). Preact draws a state change before the next frame and runs effects just after it
// (a closing <dialog> gives focus back to its opener then), so this starts once those have run; an
// element still on its way (a new endpoint's card, while the list is asked again) is waited for, a frame
// at a time, for up to `WAIT_MS`; so is a focus the browser did not take (a modal dialog still open).
// While it is waited for, a later candidate holds focus if it would otherwise be on <body>.

const WAIT_MS = 3000;

/**
 * Focuses what the first of `candidates` finds, once the next frame and its effects are done; while none finds anything, tries
 * again each frame (meanwhile focusing the first of the others that finds something, if focus is on
 * <body>), and after WAIT_MS settles for that one.
 */
export function focusSoon(...candidates: (() => HTMLElement | null | undefined)[]): void {
  const until = performance.now() + WAIT_MS;
  const attempt = () => {
    const [first, ...rest] = candidates;
    const fallback = () => rest.map((f) => f()).find((el) => el);
    const found = first?.() ?? (performance.now() > until ? fallback() : null);
    if (found) found.focus();
    else if (!document.activeElement || document.activeElement === document.body) fallback()?.focus();
    // Not taken (a modal dialog still open keeps focus inside it until it closes): again next frame.
    if ((!found || document.activeElement !== found) && performance.now() <= until) {
      requestAnimationFrame(attempt);
    }
  };
  requestAnimationFrame(() => setTimeout(() => setTimeout(attempt)));
}
