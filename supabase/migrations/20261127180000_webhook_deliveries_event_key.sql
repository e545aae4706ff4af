-- =============================================================================================
-- A delivery's event: no foreign key
--
-- private.webhook_deliveries.event_id referenced private.events with an index of its own for the
-- key. Nothing deletes events (the log is append-only, like its recipients, which have no foreign
-- keys either: supabase/migrations/20261127140000_events.sql), so the index served no query, and
-- the advisors report an unused index. The enqueue takes each event id from the log itself.
-- =============================================================================================

alter table private.webhook_deliveries drop constraint webhook_deliveries_event_id_fkey;
drop index private.webhook_deliveries_event_idx;
