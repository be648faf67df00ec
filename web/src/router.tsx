// A router of a few lines: the pages are few, and the history API is all they need.
import { type AnchorHTMLAttributes, useEffect, useState } from "react";

const listeners = new Set<() => void>();

export function navigate(to: string, opts: { replace?: boolean } = {}): void {
  if (opts.replace) history.replaceState(null, "", to);
  else history.pushState(null, "", to);
  for (const fn of listeners) fn();
}

export function useLocation(): URL {
  const [, setTick] = useState(0);
  useEffect(() => {
    const fn = () => setTick((t) => t + 1);
    listeners.add(fn);
    addEventListener("popstate", fn);
    return () => {
      listeners.delete(fn);
      removeEventListener("popstate", fn);
    };
  }, []);
  return new URL(location.href);
}

/** Changes query parameters of the current page without a new history entry. */
export function setQuery(
  params: Record<string, string | null | undefined>,
): void {
  const url = new URL(location.href);
  for (const [k, v] of Object.entries(params)) {
    if (v === null || v === undefined || v === "") url.searchParams.delete(k);
    else url.searchParams.set(k, v);
  }
  navigate(url.pathname + url.search, { replace: true });
}

export function Link(
  props: AnchorHTMLAttributes<HTMLAnchorElement> & { href: string },
) {
  return (
    <a
      {...props}
      onClick={(e) => {
        props.onClick?.(e);
        if (
          e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey ||
          e.shiftKey || e.altKey
        ) return;
        e.preventDefault();
        navigate(props.href);
      }}
    />
  );
}
