-- edge_user, the configuration API's user-request pool, gets its login from the migrations, with a
-- password only the role that runs them can read: no user role, nor the Data API's service role, may read
-- or change it (reading it would let a caller log in as the pool and take config_api's rights).
begin;
select plan(11);

select ok((select rolcanlogin from pg_roles where rolname = 'edge_user'), 'edge_user can log in after the migrations');
select ok(length(private.edge_user_password()) >= 16, 'its password is kept for the functions');

-- Every role a request or a key can take is refused, directly and through the Data API's service role.
select tests.can_become('config_api') as can_become \gset
\if :can_become
set local role config_api;
select throws_ok($$select private.edge_user_password()$$, '42501', null, 'config_api cannot read the password');
select throws_ok($$select private.set_edge_user_login('attacker-chosen-password')$$, '42501', null,
                 'config_api cannot set it');
select throws_ok($$select password from private.edge_user_login$$, '42501', null,
                 'config_api cannot read the table that keeps it locally');
reset role;
set local role authenticated;
select throws_ok($$select private.edge_user_password()$$, '42501', null, 'authenticated cannot read it');
reset role;
set local role anon;
select throws_ok($$select private.edge_user_password()$$, '42501', null, 'anon cannot read it');
reset role;
set local role service_role;
select throws_ok($$select private.set_edge_user_login('attacker-chosen-password')$$, '42501', null,
                 'the service role cannot set it');
reset role;
\else
select skip('this role cannot take the user roles here: checked on the local test cluster', 6);
\endif

select throws_ok($$select private.set_edge_user_login('short')$$, 'P0001',
                 'the password of edge_user must have at least 16 characters', 'a short password is refused');

-- The generated password (none given): three random UUIDs joined, 96 hex characters holding 366 random
-- bits (docs/operations.md says so). Rolled back with the rest of this file.
select lives_ok($$select private.set_edge_user_login()$$, 'a password is generated when none is given');
select matches(private.edge_user_password(), '^[0-9a-f]{96}$',
               'the generated password is three random UUIDs: 96 hex characters');

select * from finish();
rollback;
