import { useMutation, useQueryClient } from "@tanstack/react-query";

/** An action of the platform console: afterwards every platform query is asked again. */
export function usePlatformAction<V = void>(
  fn: (vars: V) => Promise<string | void>,
) {
  const queries = useQueryClient();
  return useMutation({
    mutationFn: fn,
    onSettled: () => queries.invalidateQueries({ queryKey: ["platform"] }),
  });
}
