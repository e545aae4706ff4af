-- =============================================================================================
-- Escrows: an index on created_at (docs/performance.md)
--
-- private.strictly_increasing_created_at_global, the trigger that keeps escrows' created_at
-- strictly increasing for the escrow-list cursor, reads max(created_at) of the whole table on
-- every insert, under the table's advisory lock. Without an index that read scans every escrow,
-- so each escrow-create cost more than the one before, while holding the lock every other
-- creation waits for. With it, max() is one probe at the end of the index.
-- =============================================================================================

create index escrows_created_idx on public.escrows (created_at);
