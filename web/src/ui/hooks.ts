import { useCallback, useEffect, useRef, useState } from "react";

export interface Loaded<T> {
  data: T | undefined;
  error: string | null;
  loading: boolean;
  reload(): Promise<void>;
}

/** Loads data when `deps` change; keeps the last data while reloading, so lists do not flash. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const seq = useRef(0);
  const loadRef = useRef(load);
  loadRef.current = load;
  const reload = useCallback(async () => {
    const mine = ++seq.current;
    setLoading(true);
    try {
      const d = await loadRef.current();
      if (mine === seq.current) {
        setData(d);
        setError(null);
      }
    } catch (e) {
      if (mine === seq.current) setError((e as Error).message);
    } finally {
      if (mine === seq.current) setLoading(false);
    }
  }, []);
  // eslint-disable-next-line react-hooks/exhaustive-deps
  useEffect(() => void reload(), deps);
  return { data, error, loading, reload };
}

export interface Action {
  pending: boolean;
  /** The last result, in words. */
  message: { kind: "ok" | "error"; text: string } | null;
  run(fn: () => Promise<string | void>): Promise<boolean>;
  clear(): void;
}

/** Every action shows that it is working and then what happened. */
export function useAction(): Action {
  const [pending, setPending] = useState(false);
  const [message, setMessage] = useState<Action["message"]>(null);
  const run = useCallback(async (fn: () => Promise<string | void>) => {
    setPending(true);
    setMessage(null);
    try {
      const text = await fn();
      if (text) setMessage({ kind: "ok", text });
      return true;
    } catch (e) {
      setMessage({ kind: "error", text: (e as Error).message });
      return false;
    } finally {
      setPending(false);
    }
  }, []);
  return { pending, message, run, clear: () => setMessage(null) };
}

/** Calls `fn` every `ms` while `active`. */
export function useInterval(fn: () => void, ms: number, active: boolean): void {
  const ref = useRef(fn);
  ref.current = fn;
  useEffect(() => {
    if (!active) return;
    const id = setInterval(() => ref.current(), ms);
    return () => clearInterval(id);
  }, [ms, active]);
}

/** Re-renders every `ms`, so relative times ("2 minutes ago") stay true. */
export function useTick(ms = 30_000): number {
  const [n, setN] = useState(0);
  useInterval(() => setN((x) => x + 1), ms, true);
  return n;
}
