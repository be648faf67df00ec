// Register a WhatsApp business number: its Phone number ID, how it is written, the Meta app's secret,
// and a verify token (generated, or the one the Meta app already uses). Errors are shown at their field.
import { useEffect, useId, useRef, useState } from "react";
import { api, ApiError, unwrap } from "../../api/client.ts";
import { useAction } from "../../api/queries.ts";
import { ActionResult } from "../../ui/ActionResult.tsx";
import { TextField } from "../../ui/TextField.tsx";
import { secretOk } from "./SecretForm.tsx";

type Field =
  | "phone_number_id"
  | "display_phone_number"
  | "app_secret"
  | "verify_token";

function check(v: Record<Field, string>): Partial<Record<Field, string>> {
  const out: Partial<Record<Field, string>> = {};
  if (!/^[0-9A-Za-z_.-]{1,64}$/.test(v.phone_number_id.trim())) {
    out.phone_number_id = "Enter the Phone number ID from Meta (WhatsApp › API Setup): digits, no spaces.";
  }
  if (
    v.display_phone_number.trim() &&
    !/^[0-9 +().-]{1,40}$/.test(v.display_phone_number.trim())
  ) {
    out.display_phone_number = "Use digits, spaces and + ( ) . - only.";
  }
  if (!secretOk(v.app_secret)) {
    out.app_secret = "The app secret must be 16 to 256 characters, no spaces.";
  }
  if (v.verify_token && !secretOk(v.verify_token)) {
    out.verify_token = "The verify token must be 16 to 256 characters, no spaces.";
  }
  return out;
}

const ORDER: Field[] = [
  "phone_number_id",
  "display_phone_number",
  "app_secret",
  "verify_token",
];

export function RegisterNumberForm(
  { close, onRegistered }: {
    close(): void;
    onRegistered(number: string, verifyToken: string): void;
  },
) {
  const [v, setV] = useState<Record<Field, string>>({
    phone_number_id: "",
    display_phone_number: "",
    app_secret: "",
    verify_token: "",
  });
  const [errors, setErrors] = useState<Partial<Record<Field, string>>>({});
  const refs = {
    phone_number_id: useRef<HTMLInputElement>(null),
    display_phone_number: useRef<HTMLInputElement>(null),
    app_secret: useRef<HTMLInputElement>(null),
    verify_token: useRef<HTMLInputElement>(null),
  };
  const id = useId();
  // Opened from "Register a number", which is gone now: its first field takes focus.
  useEffect(() => refs.phone_number_id.current?.focus(), []);
  const focusFirst = (e: Partial<Record<Field, string>>) => refs[ORDER.find((f) => e[f])!]?.current?.focus();
  const register = useAction(async () => {
    const r = await unwrap(api.POST("/webhooks/connections/whatsapp/numbers", {
      body: {
        phone_number_id: v.phone_number_id.trim(),
        app_secret: v.app_secret,
        ...(v.display_phone_number.trim() ? { display_phone_number: v.display_phone_number.trim() } : {}),
        ...(v.verify_token ? { verify_token: v.verify_token } : {}),
      },
    }));
    onRegistered(r.display_phone_number ?? r.phone_number_id, r.verify_token);
  });
  const field = (
    name: Field,
    label: string,
    help: string,
    extra: Record<string, unknown> = {},
  ) => (
    <TextField
      id={`${id}-${name}`}
      label={label}
      help={help}
      error={errors[name]}
      inputRef={refs[name]}
      value={v[name]}
      autoComplete="off"
      spellcheck={false}
      onChange={(e) => setV({ ...v, [name]: e.currentTarget.value })}
      {...extra}
    />
  );
  return (
    <form
      className="panel"
      aria-labelledby={`${id}-t`}
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        const found = check(v);
        setErrors(found);
        if (Object.keys(found).length > 0) {
          focusFirst(found);
          return;
        }
        register.mutate(undefined, {
          onError: (err) => {
            if (!(err instanceof ApiError)) return;
            const atFields: Partial<Record<Field, string>> = {};
            for (const f of err.fields) {
              if (!(ORDER as string[]).includes(f.field)) continue;
              atFields[f.field as Field] = f.message.startsWith("must")
                ? `This ${f.message}.`
                : `${f.message[0]!.toUpperCase()}${f.message.slice(1)}.`;
            }
            if (Object.keys(atFields).length > 0) {
              setErrors(atFields);
              focusFirst(atFields);
            }
          },
        });
      }}
    >
      <h3 id={`${id}-t`}>Register a number</h3>
      {field(
        "phone_number_id",
        "Phone number ID",
        "In Meta: WhatsApp › API Setup, under your number (not the phone number itself).",
        {
          inputMode: "numeric",
        },
      )}
      {field(
        "display_phone_number",
        "Phone number (optional)",
        "How the number is written, to tell your numbers apart.",
        {
          inputMode: "tel",
        },
      )}
      {field(
        "app_secret",
        "App secret",
        "In Meta: App settings › Basic › App secret. Never shown again.",
      )}
      {field(
        "verify_token",
        "Verify token (optional)",
        "Leave empty to have one made for you. Enter your own only if your Meta app already uses one for another number.",
      )}
      {Object.keys(errors).length === 0 && <ActionResult action={register} />}
      <div className="actions">
        <button type="submit" className="primary" aria-disabled={register.isPending || undefined}>
          {register.isPending ? "Registering…" : "Register number"}
        </button>
        <button type="button" onClick={close}>Cancel</button>
      </div>
    </form>
  );
}
