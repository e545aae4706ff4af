-- =============================================================================================
-- A card charge confirmed after its payer deleted the account (docs/compliance.md#account-deletion)
--
-- The provider's confirmed money is booked, never refused: before this, the guard on
-- public.transactions refused any row of a deleted account as an ended session, so a late
-- charge.success failed for ever.
-- - private.deleted_party_guard: a transaction of a deleted account is refused unless it is a
--   refund back through the provider (an escrow_refund whose metadata says refund_to provider),
--   which is the buyer's money going back where it came from. What a deleted user's own request
--   would write (a top-up, a withdrawal, an escrow's funding) and any credit to their wallet stay
--   refused.
-- - private.escrow_charge_succeed: the expected charge for an app escrow that can no longer take it
--   went to the payer's wallet; for a deleted payer it goes to the suspense account, flagged
--   (private.deleted_account_suspense), the funding transaction marked credited_to_suspense so a
--   replay is already_done. A merchant escrow's late charge is refunded through the provider as
--   before, whoever the buyer is now.
-- =============================================================================================

create or replace function private.deleted_party_guard()
returns trigger
language plpgsql
security definer
set search_path = ''
as $$
declare
  v_deleted timestamptz;
begin
  if tg_table_name = 'escrows' then
    if new.counterparty_id is not null
       and (tg_op = 'INSERT' or new.counterparty_id is distinct from old.counterparty_id) then
      select deleted_at into v_deleted from private.users where id = new.counterparty_id for share;
      if v_deleted is not null then
        -- the phone belongs to no account now: whoever signs up with it is the counterparty
        new.counterparty_id := null;
      end if;
    end if;
    if tg_op = 'INSERT' then
      select deleted_at into v_deleted from private.users where id = new.initiator_id for share;
      if v_deleted is not null then
        perform private.refuse(401, 'unauthenticated', pg_catalog.jsonb_build_object('reason', 'ended'));
      end if;
    end if;
  else
    select deleted_at into v_deleted from private.users where id = new.user_id for share;
    -- a refund back to the card or account the money came from is not the user's doing: let it be
    if v_deleted is not null
       and not (new.type = 'escrow_refund' and new.metadata ->> 'refund_to' = 'provider') then
      perform private.refuse(401, 'unauthenticated', pg_catalog.jsonb_build_object('reason', 'ended'));
    end if;
  end if;
  return new;
end
$$;
comment on function private.deleted_party_guard() is 'Before an escrow or a transaction is written: waits for a deletion of its party in progress; a deleted counterparty is left unset, a deleted initiator or owner refused as an ended session (but a refund of a deleted buyer''s charge through the provider).';
revoke all on function private.deleted_party_guard() from public;

create or replace function private.escrow_charge_succeed(p_tx uuid, p_received bigint, p_charge_id text, p_payload jsonb)
returns text
language plpgsql
set search_path = ''
as $$
declare
  t public.transactions;
  e public.escrows;
  v_escrow uuid;
  v_channel text := p_payload -> 'data' ->> 'channel';
  v_refund uuid;
begin
  -- the escrow first, then its transaction: the lock order of every escrow operation (they lock
  -- the escrow, then change its transactions), so a charge racing a cancel cannot deadlock
  select escrow_id into v_escrow from public.transactions where id = p_tx and type = 'escrow_funding';
  if not found then
    return 'not_found';
  end if;
  e := private.escrow_lock(v_escrow, null);
  select * into t from public.transactions where id = p_tx for update;
  if t.status = 'succeeded' or t.metadata ? 'credited_to_wallet' or t.metadata ? 'refund_due'
     or t.metadata ? 'credited_to_suspense' then
    return 'already_done';
  end if;
  if p_received is null or p_received <> e.total_charge then
    perform private.charge_hold_for_review(t.id, 'amount_mismatch', p_received, null, p_payload);
    return 'flagged';
  end if;
  -- the channel the buyer paid by is where a refund goes back to
  update public.transactions
     set provider_charge_id = p_charge_id,
         metadata = (metadata - 'review') || pg_catalog.jsonb_strip_nulls(pg_catalog.jsonb_build_object('channel', v_channel))
   where id = t.id;
  if t.status = 'pending' and private.escrow_is_fundable(e) then
    perform private.post_transfer('escrow-fund:' || e.id, 'escrow_funding',
      pg_catalog.jsonb_build_array(
        pg_catalog.jsonb_build_object('system', 'provider_clearing', 'amount', -e.total_charge),
        pg_catalog.jsonb_build_object('account_id', private.owner_account('escrow_hold', e.id), 'amount', e.total_charge)),
      t.id);
    return 'escrow:' || private.escrow_mark_funded(e, t.id);
  end if;
  if e.merchant_id is not null then
    -- A merchant escrow's buyer paid after it was cancelled or expired: the whole charge goes back
    -- to the card or account it came from, never to a wallet. Nothing is posted: the money never
    -- entered a hold, and it leaves the provider as it came (the refund has no ledger transfer).
    v_refund := private.escrow_transaction(t.user_id, e.id, null, 'escrow_refund',
                  pg_catalog.jsonb_build_object('kind', 'refund', 'title', e.title), e.total_charge, 'in',
                  t.provider, 'pending',
                  pg_catalog.jsonb_build_object('refund_to', 'provider', 'charge_reference', t.id,
                                                'channel', v_channel, 'late_payment', true));
    update public.transactions
       set status = 'failed', completed_at = now(),
           metadata = metadata || pg_catalog.jsonb_build_object('failure_reason', 'escrow no longer fundable',
             'received_amount', e.total_charge, 'refund_due', true, 'refund_tx', v_refund)
     where id = t.id;
    return 'refund_due';
  end if;
  if exists (select 1 from private.users where id = t.user_id and deleted_at is not null) then
    -- the payer deleted the account: nobody can reach its wallet, the money waits in suspense
    update public.transactions
       set status = 'failed', completed_at = now(),
           metadata = metadata || pg_catalog.jsonb_build_object('failure_reason', 'escrow no longer fundable',
             'received_amount', e.total_charge, 'credited_to_suspense', true)
     where id = t.id;
    perform private.deleted_account_suspense(t.user_id, e.total_charge, 'escrow-charge-suspense:' || t.id,
      'deleted_account_deposit', t.id, coalesce(p_charge_id, t.id::text),
      pg_catalog.jsonb_build_object('source', 'late_escrow_charge', 'escrow_id', e.id));
    return 'credited_to_suspense';
  end if;
  -- The expected money, but the escrow can no longer take it: it is the payer's, in the wallet.
  update public.transactions
     set status = 'failed', completed_at = now(),
         metadata = metadata || pg_catalog.jsonb_build_object('failure_reason', 'escrow no longer fundable',
           'received_amount', e.total_charge, 'credited_to_wallet', true)
   where id = t.id;
  perform private.virtual_account_deposit(t.user_id, e.total_charge, t.provider, 'escrow-charge:' || coalesce(p_charge_id, t.id::text),
    pg_catalog.jsonb_build_object('escrow_id', e.id, 'reason', 'escrow charge not applied'));
  return 'credited_to_wallet';
end
$$;
comment on function private.escrow_charge_succeed(uuid, bigint, text, jsonb) is
  'A confirmed card charge for an escrow: exactly total_charge funds the hold (its channel kept); if the escrow is no longer fundable, the payer''s wallet (an app escrow; the suspense account, flagged, when the payer deleted the account) or, for a merchant escrow, a pending refund of the whole charge through the provider (refund_due; nothing posted: it never entered a hold); any other amount credits nothing and is held for review.';
revoke all on function private.escrow_charge_succeed(uuid, bigint, text, jsonb) from public;
grant execute on function private.escrow_charge_succeed(uuid, bigint, text, jsonb) to service_role;
