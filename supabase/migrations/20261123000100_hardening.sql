-- =============================================================================================
-- Hardening (issue 8): the SMS queue learns which messages are withheld and when a queued
-- message stops being worth sending; refresh tokens remember their one grace-window sibling.
-- =============================================================================================

-- ---------------------------------------------------------------------------------------------
-- SMS queue
-- ---------------------------------------------------------------------------------------------

-- withheld: why a message is recorded but never sent (null: it is to be sent). The same row is
--   written on both sides of a decision that must not show from outside (a login code for a phone
--   without an account), and for invites over a phone's daily cap.
-- expires_at: after this a queued message is pointless (a one-time code) and is not sent.
alter table private.sms_outbox
  add column withheld text,
  add column expires_at timestamptz;
comment on column private.sms_outbox.withheld is 'Why this message is never sent (null: it is to be sent): no_account, invite_daily_cap.';
comment on column private.sms_outbox.expires_at is 'A queued message not sent by then is dropped (one-time codes).';

drop index private.sms_outbox_unsent_idx;
create index sms_outbox_unsent_idx on private.sms_outbox (id) where sent_at is null and withheld is null;

-- ---------------------------------------------------------------------------------------------
-- Refresh tokens
-- ---------------------------------------------------------------------------------------------

-- When a rotated token's one reuse inside the grace window was spent on a sibling session token.
alter table private.refresh_tokens add column grace_used_at timestamptz;
comment on column private.refresh_tokens.grace_used_at is 'Set when this rotated token''s single grace-window reuse was spent; a further reuse revokes the session.';
