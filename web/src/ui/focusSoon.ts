// Gives focus back to where an action came from once the page has redrawn: the panel or form that had
// focus is gone by then, and focus must not fall to <body> (keyboard and screen-reader users would start
// over from the top). Preact draws a state change before the next frame, so a frame later the element
// asked for exists.

/** Focuses the first of `candidates` that finds an element, after the next frame. */
export function focusSoon(...candidates: (() => HTMLElement | null | undefined)[]): void {
  requestAnimationFrame(() => {
    for (const find of candidates) {
      const el = find();
      if (el) {
        el.focus();
        return;
      }
    }
  });
}
