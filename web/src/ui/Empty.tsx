import type { ReactNode } from "react";

export function Empty(
  { title, children }: { title: string; children?: ReactNode },
) {
  return (
    <div className="empty">
      <h3>{title}</h3>
      {children}
    </div>
  );
}
