-- Every table in an exposed schema has row-level security on. A table added without it fails here.
begin;
select plan(1);

select is(
  array(
    select c.relname::text
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'public' and c.relkind in ('r', 'p') and not c.relrowsecurity
    order by 1
  ),
  array[]::text[],
  'every table in public has row-level security enabled'
);

select * from finish();
rollback;
