import { useEffect, useState } from "react";

/** Re-renders every `ms`, so relative times ("2 minutes ago") stay true. */
export function useTick(ms = 30_000): number {
  const [n, setN] = useState(0);
  useEffect(() => {
    const id = setInterval(() => setN((x) => x + 1), ms);
    return () => clearInterval(id);
  }, [ms]);
  return n;
}
