-- What starts the mail-sender on a hosted project (20261125100000_mail_outbox.sql): a wake-up when mail
-- is queued (at most every 2 s) and the every-minute housekeeping while mail is due, each one pg_net
-- POST with the URL and bearer secret from Vault. First without pg_net (nothing is posted, queuing
-- works), then with stand-ins that record what would be sent, as 22_hosted_dispatch.test.sql does.
begin;
select plan(21);

-- Whatever other tests left is not due in this transaction.
update private.mail_outbox set next_attempt_at = now() + interval '1 hour' where status = 'pending';
select tests.create_organization('Mail Church', 'e0000000-0000-4000-8000-0000000000aa');

select is((select schedule from cron.job where jobname = 'mail-housekeeping'), '* * * * *',
  'housekeeping (and the sender''s start on a hosted project) runs every minute');
select isnt(private.mail_enqueue('e0000000-0000-4000-8000-0000000000aa', 'endpoint_failing', 'A@Example.org', '{}'), null,
  'without pg_net a mail is still queued (the dev server sends it on NOTIFY)');
-- Where pg_net is installed (a hosted project) the stand-in cannot take its place; where Vault is (the
-- hosted-like lane), it is used.
select to_regnamespace('net') is null as stand_ins \gset
\if :stand_ins
select is(private.mail_invoke_sender(), null, 'without pg_net nothing is posted');

select tests.stand_in_pg_net();
select tests.stand_in_vault();
update private.function_wakes set woken_at = '-infinity' where function_name = 'mail-sender';

select isnt(private.mail_enqueue('e0000000-0000-4000-8000-0000000000aa', 'endpoint_failing', 'b@example.org', '{}'), null,
  'a second mail is queued');
select is((select jsonb_build_object('url', url, 'auth', headers ->> 'Authorization') from net.posted),
  jsonb_build_object('url', 'https://ref.supabase.example/functions/v1/mail-sender', 'auth', 'Bearer dispatch-secret'),
  'queuing it woke the mail-sender, with the secret');
select isnt(private.mail_enqueue('e0000000-0000-4000-8000-0000000000aa', 'endpoint_failing', 'c@example.org', '{}'), null,
  'a third');
select is((select count(*)::int from net.posted), 1, 'within 2 s of the last wake-up: no second post');
select ok(private.mail_housekeeping() ? 'given_up', 'housekeeping runs');
select is((select count(*)::int from net.posted), 2, 'the every-minute housekeeping starts the sender while mail is due');
\else
select skip('pg_net is installed here; the stand-in needs a database without it', 7);
\endif
select isnt(private.mail_enqueue('e0000000-0000-4000-8000-0000000000aa', 'endpoint_failing', 'd@example.org', '{}', 'key'),
  null, 'a mail with a dedupe key is queued');
select is(private.mail_enqueue('e0000000-0000-4000-8000-0000000000aa', 'endpoint_failing', 'd@example.org', '{}', 'key'),
  null, 'the same key again queues nothing');

-- An organization that queued 100 mails within the hour: the next wait an hour; another's do not.
select tests.create_organization('Busy Church', 'e0000000-0000-4000-8000-0000000000bb');
-- Established: a new organization sends at most 50 invitations a day (06_people.test.sql).
update public.organizations set created_at = now() - interval '30 days' where id = 'e0000000-0000-4000-8000-0000000000bb';
select count(private.mail_enqueue('e0000000-0000-4000-8000-0000000000bb', 'invitation', 'x' || g || '@example.org', '{}'))
  from generate_series(1, 100) g;
create temp table queued as
  select private.mail_enqueue('e0000000-0000-4000-8000-0000000000bb', 'invitation', 'late@example.org', '{}') as late,
         private.mail_enqueue('e0000000-0000-4000-8000-0000000000aa', 'invitation', 'other@example.org', '{}') as other;
select ok((select next_attempt_at > now() + interval '59 minutes' from private.mail_outbox
           where id = (select late from queued)),
  'the 101st mail of an organization within an hour waits an hour (kept, not lost)');
select ok((select next_attempt_at <= now() from private.mail_outbox where id = (select other from queued)),
  'another organization''s mail is due at once');

-- An admin inviting an address book: 1,000 mails are spread over the day, at most 100 due in any
-- hour (they used to be due all together an hour later), and past 2,400 a day invitations are refused.
select count(private.mail_enqueue('e0000000-0000-4000-8000-0000000000bb', 'invitation', 'y' || g || '@example.org', '{}'))
  from generate_series(1, 899) g;
select is((select max(n)::int from (
    select count(*) as n from private.mail_outbox
     where organization_id = 'e0000000-0000-4000-8000-0000000000bb'
     group by floor(extract(epoch from next_attempt_at - now()) / 3600)) h), 100,
  '1,000 mails of one organization: at most 100 due in any hour');
select ok((select max(next_attempt_at) >= now() + interval '9 hours' from private.mail_outbox
            where organization_id = 'e0000000-0000-4000-8000-0000000000bb'),
  'the 1,000th is due 9 hours later');
select count(private.mail_enqueue('e0000000-0000-4000-8000-0000000000bb', 'invitation', 'z' || g || '@example.org', '{}'))
  from generate_series(1, 1400) g;
select tests.create_user('busy-admin@example.org', 'e0000000-0000-4000-8000-0000000000b1');
select tests.add_member('e0000000-0000-4000-8000-0000000000b1', 'e0000000-0000-4000-8000-0000000000bb', 'admin');
select tests.act_as_config_api('e0000000-0000-4000-8000-0000000000b1', 'e0000000-0000-4000-8000-0000000000bb');
select throws_ok($$select public.create_invitation('one-more@example.org', 'staff')$$, '54000', null,
  'past 2,400 mails in a day, an admin''s invitation is refused');
select is((select count(*)::int from public.organization_invitations where email = 'one-more@example.org'), 0,
  'and no invitation is left behind');
select tests.clear_act_as();
select is(private.mail_enqueue('e0000000-0000-4000-8000-0000000000bb', 'endpoint_failing', 'ops@example.org', '{}', 'k1'),
  null, 'a mail about an endpoint is not queued either');
select is((select status || ': ' || last_error from private.mail_outbox where dedupe_key = 'k1'),
  'failed: not sent: the organization queued 2400 mails in the last 24 hours',
  'but recorded as not sent, with the reason (the operator''s health counts it)');

-- The organization's name goes into mails to any address an admin invites: one line, bounded.
select tests.act_as_config_api('e0000000-0000-4000-8000-0000000000b1', 'e0000000-0000-4000-8000-0000000000bb');
select throws_ok($$update public.organizations set name = E'Busy Church\r\n\r\nYour account is locked: sign in at https://evil.example'
                   where id = 'e0000000-0000-4000-8000-0000000000bb'$$, '23514', null,
  'an admin cannot put a line break into the organization''s name');
select throws_ok($$update public.organizations set name = repeat('x', 201)
                   where id = 'e0000000-0000-4000-8000-0000000000bb'$$, '23514', null,
  'nor more than 200 characters');
select tests.clear_act_as();

select * from finish();
rollback;
