// Adds or updates one local user the way Supabase Auth stores them (auth.users with a bcrypt
// encrypted_password made by pgcrypto, e-mail confirmed), and optionally their membership of an
// organization, created by name when missing. Idempotent by e-mail: used by `npm run dev:user` and tests.
import type { Sql } from "../../supabase/functions/_shared/db.ts";

export interface DevUserInput {
  email: string;
  password: string;
  /** Organization name; made when no organization has this name. */
  organization?: string;
  role?: "admin" | "staff";
}

export interface DevUser {
  userId: string;
  email: string;
  created: boolean;
  organizationId?: string;
}

const NIL_UUID = "00000000-0000-0000-0000-000000000000";

export async function upsertDevUser(sql: Sql, input: DevUserInput): Promise<DevUser> {
  const email = input.email.trim().toLowerCase();
  return await sql.begin(async (tx) => {
    // Two runs for one e-mail at once must still leave one user.
    await tx`select pg_advisory_xact_lock(hashtext(${"dev-user:" + email}))`;
    const [existing] = await tx<{ id: string }[]>`
      select id from auth.users where lower(email) = ${email} and instance_id = ${NIL_UUID}
      order by created_at limit 1`;
    let userId: string;
    if (existing) {
      userId = existing.id;
      await tx`update auth.users
               set encrypted_password = extensions.crypt(${input.password}, extensions.gen_salt('bf', 10)),
                   email_confirmed_at = coalesce(email_confirmed_at, now()), updated_at = now()
               where id = ${userId}`;
    } else {
      const [row] = await tx<{ id: string }[]>`
        insert into auth.users (instance_id, id, aud, role, email, encrypted_password, email_confirmed_at,
          raw_app_meta_data, raw_user_meta_data, created_at, updated_at,
          confirmation_token, recovery_token, email_change_token_new, email_change)
        values (${NIL_UUID}, gen_random_uuid(), 'authenticated', 'authenticated', ${email},
          extensions.crypt(${input.password}, extensions.gen_salt('bf', 10)), now(),
          '{"provider":"email","providers":["email"]}', '{}', now(), now(), '', '', '', '')
        returning id`;
      userId = row!.id;
    }
    let organizationId: string | undefined;
    if (input.organization) {
      const [org] = await tx<{ id: string }[]>`
        select id from public.organizations where name = ${input.organization} order by created_at, id limit 1`;
      organizationId = org?.id ??
        (await tx<{ id: string }[]>`insert into public.organizations (name) values (${input.organization})
                                     returning id`)[0]!.id;
      await tx`insert into public.profiles (user_id, organization_id, role)
               values (${userId}, ${organizationId}, ${input.role ?? "staff"})
               on conflict (user_id, organization_id) do update set role = excluded.role`;
    }
    return { userId, email, created: !existing, organizationId };
  }) as DevUser;
}
