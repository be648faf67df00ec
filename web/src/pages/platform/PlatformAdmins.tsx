// The platform administrators; a superadmin grants (by the e-mail of an account) and revokes.
import { useQuery } from "@tanstack/react-query";
import { useId, useRef, useState } from "react";
import { api, ApiError, unwrap } from "../../api/client.ts";
import { errorText } from "../../api/queries.ts";
import { ActionResult } from "../../ui/ActionResult.tsx";
import { ErrorBox } from "../../ui/ErrorBox.tsx";
import { Loading } from "../../ui/Loading.tsx";
import { TextField } from "../../ui/TextField.tsx";
import { Time } from "../../ui/Time.tsx";
import { usePlatformAction } from "./usePlatformAction.ts";

export function PlatformAdmins({ superadmin }: { superadmin: boolean }) {
  const id = useId();
  const admins = useQuery({
    queryKey: ["platform", "admins"],
    queryFn: () => unwrap(api.GET("/webhooks/platform/admins")).then((r) => r.data),
  });
  const [email, setEmail] = useState("");
  const [emailError, setEmailError] = useState<string | undefined>();
  const input = useRef<HTMLInputElement>(null);
  const grant = usePlatformAction(async () => {
    try {
      const a = await unwrap(
        api.POST("/webhooks/platform/admins", {
          body: { email: email.trim() },
        }),
      );
      setEmail("");
      return `${a.email} is now a platform administrator.`;
    } catch (e) {
      const field = e instanceof ApiError ? e.fields.find((f) => f.field === "email") : undefined;
      if (field) {
        setEmailError(`This address ${field.message}.`);
        input.current?.focus();
      }
      throw e;
    }
  });
  const revoke = usePlatformAction(
    async (a: { user_id: string; email: string | null }) => {
      await unwrap(
        api.DELETE("/webhooks/platform/admins/{user_id}", {
          params: { path: { user_id: a.user_id } },
        }),
      );
      return `${a.email} is no longer a platform administrator.`;
    },
  );
  return (
    <section>
      <h2>Platform administrators</h2>
      {admins.error && (
        <ErrorBox
          error={`Could not load them: ${errorText(admins.error)}`}
          retry={() => void admins.refetch()}
        />
      )}
      {admins.isPending && <Loading what="platform administrators" />}
      {admins.data && (
        <div
          className="table-wrap"
          role="region"
          aria-label="Platform administrators"
          tabIndex={0}
        >
          <table>
            <thead>
              <tr>
                <th scope="col">Account</th>
                <th scope="col">Rights</th>
                <th scope="col" className="wide">Last sign-in</th>
                {superadmin && (
                  <th scope="col">
                    <span className="sr-only">Actions</span>
                  </th>
                )}
              </tr>
            </thead>
            <tbody>
              {admins.data.map((a) => (
                <tr key={a.user_id}>
                  <td>{a.email}</td>
                  <td>
                    {a.is_superadmin ? "Superadmin" : "Platform administrator"}
                  </td>
                  <td className="wide">
                    <Time iso={a.last_sign_in_at} fallback="Never" />
                  </td>
                  {superadmin && (
                    <td>
                      {!a.is_superadmin && (
                        <button
                          type="button"
                          className="danger"
                          aria-disabled={revoke.isPending || undefined}
                          onClick={() => revoke.mutate(a)}
                          aria-label={`Revoke ${a.email}`}
                        >
                          Revoke
                        </button>
                      )}
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <ActionResult action={revoke} />
      {superadmin && (
        <form
          className="panel"
          noValidate
          aria-labelledby={`${id}-g`}
          onSubmit={(e) => {
            e.preventDefault();
            if (!/^[^@\s]+@[^@\s]+$/.test(email.trim())) {
              setEmailError(
                "Enter the e-mail address of the person's account.",
              );
              input.current?.focus();
              return;
            }
            setEmailError(undefined);
            grant.mutate();
          }}
        >
          <h3 id={`${id}-g`}>Make someone a platform administrator</h3>
          <TextField
            id={`${id}-email`}
            label="E-mail of their account"
            help="They must have an account (they sign up first). The rights count from their next request."
            type="email"
            error={emailError}
            inputRef={input}
            value={email}
            onChange={(e) => setEmail(e.currentTarget.value)}
          />
          <div className="actions">
            <button
              type="submit"
              className="primary"
              aria-disabled={grant.isPending || undefined}
            >
              {grant.isPending ? "Granting…" : "Make platform administrator"}
            </button>
          </div>
          <ActionResult action={grant} />
        </form>
      )}
    </section>
  );
}
