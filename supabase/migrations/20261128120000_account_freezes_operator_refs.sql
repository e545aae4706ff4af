-- =============================================================================================
-- Account freezes: who froze and unfroze, without foreign keys
-- =============================================================================================
-- private.account_freezes names the operator who froze an account and the one who unfroze it.
-- Those references are facts of a history that is only ever appended to (a row is closed, never
-- rewritten), looked up by the frozen user, never by the operator; a foreign key to
-- private.users would want an index on each column that no query uses. The references stay as
-- plain ids, as the other append-only records of the service keep theirs.

alter table private.account_freezes drop constraint account_freezes_frozen_by_fkey;
alter table private.account_freezes drop constraint account_freezes_unfrozen_by_fkey;
