import type { ReactNode } from "react";

/** What a list says when it has nothing. `level`: its heading's, one below the heading it sits under. */
export function Empty(
  { title, level = 3, children }: { title: string; level?: 2 | 3; children?: ReactNode },
) {
  const Heading = level === 2 ? "h2" : "h3";
  return (
    <div className="empty">
      <Heading>{title}</Heading>
      {children}
    </div>
  );
}
