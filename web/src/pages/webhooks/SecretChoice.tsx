// Generate the signing secret, or use the organization's own: the strength rule is shown and checked as
// it is typed (the API and the database enforce the same rule).
import { type Ref, useId } from "react";

export type SecretMode = "generate" | "own";

/** The rule, as the API states it; each part checked separately so the person sees what is missing. */
export function secretChecks(s: string): { label: string; ok: boolean }[] {
  if (s.startsWith("whsec_")) {
    return [{
      label: "A whsec_ secret: whsec_ followed by base64 of 24 bytes or more",
      ok: /^whsec_[A-Za-z0-9+/]{32,}={0,2}$/.test(s),
    }];
  }
  return [
    { label: "24 to 256 characters", ok: s.length >= 24 && s.length <= 256 },
    {
      label: "No spaces; letters, digits and punctuation only",
      ok: s.length > 0 && /^[!-~]+$/.test(s),
    },
    { label: "At least 8 different characters", ok: new Set(s).size >= 8 },
  ];
}

export function SecretChoice(
  { mode, setMode, value, setValue, error, inputRef }: {
    mode: SecretMode;
    setMode(m: SecretMode): void;
    value: string;
    setValue(v: string): void;
    error?: string;
    inputRef?: Ref<HTMLInputElement>;
  },
) {
  const id = useId();
  const checks = secretChecks(value);
  return (
    <fieldset>
      <legend>Signing secret</legend>
      <div className="choice">
        <input
          type="radio"
          id={`${id}-gen`}
          name={`${id}-mode`}
          checked={mode === "generate"}
          onChange={() => setMode("generate")}
        />
        <label htmlFor={`${id}-gen`}>
          Generate a strong secret for us (recommended)
        </label>
      </div>
      <div className="choice">
        <input
          type="radio"
          id={`${id}-own`}
          name={`${id}-mode`}
          checked={mode === "own"}
          onChange={() => setMode("own")}
        />
        <label htmlFor={`${id}-own`}>Use our own secret</label>
      </div>
      {mode === "own" && (
        <>
          <label htmlFor={`${id}-value`}>Your secret</label>
          <input
            id={`${id}-value`}
            ref={inputRef}
            value={value}
            autoComplete="off"
            spellCheck={false}
            aria-invalid={error ? true : undefined}
            aria-describedby={`${id}-rule${error ? ` ${id}-err` : ""}`}
            onChange={(e) => setValue(e.target.value)}
          />
          <ul
            id={`${id}-rule`}
            className="rule"
            aria-label="What the secret needs"
          >
            {checks.map((c) => (
              <li key={c.label} className={c.ok ? "ok" : "muted"}>
                <span aria-hidden="true">{c.ok ? "✓ " : "○ "}</span>
                {c.label}
                <span className="sr-only">
                  {c.ok ? " (met)" : " (not met yet)"}
                </span>
              </li>
            ))}
          </ul>
          {error && <p id={`${id}-err`} className="field-error">{error}</p>}
        </>
      )}
    </fieldset>
  );
}
