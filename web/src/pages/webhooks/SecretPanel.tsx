// A signing secret just made (a new endpoint, a rotation): shown once, with how to check a delivery.
// It takes focus when it appears, since the form that led here is gone.
import { useEffect, useRef } from "react";
import { focusSoon } from "../../ui/focusSoon.ts";
import { OnceSecret } from "../../ui/OnceSecret.tsx";
import { VerifyHelp } from "./VerifyHelp.tsx";

export function SecretPanel(
  { title, value, again, onDone }: { title: string; value: string; again?: boolean; onDone(): void },
) {
  const heading = useRef<HTMLHeadingElement>(null);
  // After the frame: a dialog that led here (Rotate, Reveal) closes in the same update and gives focus
  // back to its opener first.
  useEffect(() => focusSoon(() => heading.current), [value]);
  return (
    <section className="panel" aria-label={title}>
      <h2 ref={heading} tabIndex={-1}>{title}</h2>
      <OnceSecret label="Signing secret" value={value} again={again}>
        <VerifyHelp />
      </OnceSecret>
      <button type="button" onClick={onDone}>I have saved the secret</button>
    </section>
  );
}
