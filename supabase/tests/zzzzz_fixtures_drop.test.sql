-- The last file: drops the fixtures 00000_fixtures.test.sql created, so a run against a linked project
-- leaves nothing behind.
begin;
select plan(1);
drop schema tests cascade;
select is(to_regnamespace('tests'), null, 'the test fixtures are gone');
select * from finish();
commit;
