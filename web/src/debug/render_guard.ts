// Development builds only (the browser tests' WEB_TEST_DEBUG build among them): React warns when a
// component updates another while it renders ("Cannot update a component while rendering a different
// component"), preact/debug does not. A state update during a render makes the page depend on render
// order; here it says so in the console, where the browser tests' console check fails on it.
//
// It uses Preact's render hooks under their published short names (`__r` before a component renders,
// `__b` before any vnode is diffed: its children, so its own render is over), as preact/hooks does.
import { Component, options } from "preact";

type VNode = { __c?: unknown; type?: unknown };
type Hook = ((vnode: VNode) => void) | undefined;

if (import.meta.env.DEV) {
  const hooks = options as unknown as Record<"__r" | "__b" | "diffed", Hook>;
  const { __r: render, __b: diff, diffed } = hooks;
  let rendering: { component: unknown; name: string } | null = null;
  const nameOf = (type: unknown) =>
    typeof type === "function"
      ? (type as { displayName?: string; name: string }).displayName ??
        (type as { name: string }).name
      : "?";
  hooks.__r = (vnode) => {
    rendering = { component: vnode.__c, name: nameOf(vnode.type) };
    render?.(vnode);
  };
  hooks.__b = (vnode) => {
    rendering = null;
    diff?.(vnode);
  };
  hooks.diffed = (vnode) => {
    rendering = null;
    diffed?.(vnode);
  };
  const setState = Component.prototype.setState;
  Component.prototype.setState = function (this: Component, ...args: Parameters<typeof setState>) {
    if (rendering && rendering.component !== this) {
      console.error(
        `Cannot update a component (${nameOf(this.constructor)}) while rendering a different component ` +
          `(${rendering.name}).`,
      );
    }
    return setState.apply(this, args);
  };
}
