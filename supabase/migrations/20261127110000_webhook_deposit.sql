-- =============================================================================================
-- webhook-payments: a bank transfer into a virtual account taken in one call, its outcome included
-- (docs/performance.md, "The payments webhook")
--
-- A deposit was recorded in private.webhook_inbox and credited through
-- private.bank_transfer_received in one statement, and its outcome written by a second one sent
-- with COMMIT: two round trips. private.webhook_deposit does the three in one call, so the service
-- sends the setup and this call as one message. The outcome's words stay the service's
-- (outcomeText in shared/money/payments/webhook.ts): it passes the prefix put before the credit's
-- answer. An account number nobody has writes nothing: the service then takes the event the
-- general way (by customer code, or flagged), in a transaction of its own.
-- =============================================================================================

create function private.webhook_deposit(
  p_event_key text, p_event_type text, p_payload jsonb, p_account_number text, p_amount bigint,
  p_provider text, p_charge_id text, p_metadata jsonb, p_outcome_prefix text
)
returns text
language plpgsql
set search_path = ''
as $$
declare
  v_user uuid;
  v_result text;
begin
  select user_id into v_user from public.virtual_accounts where account_number = p_account_number;
  if v_user is null then
    return null;
  end if;
  -- a redelivered or concurrent duplicate meets the primary key (and waits for the first to end)
  insert into private.webhook_inbox (provider, event_key, event_type, payload, outcome)
  values ('payments', p_event_key, p_event_type, p_payload, 'processing')
  on conflict do nothing;
  if not found then
    return 'duplicate';
  end if;
  v_result := private.bank_transfer_received(v_user, p_amount, p_provider, p_charge_id, p_metadata);
  update private.webhook_inbox set outcome = p_outcome_prefix || v_result
   where provider = 'payments' and event_key = p_event_key;
  return v_result;
end
$$;
comment on function private.webhook_deposit(p_event_key text, p_event_type text, p_payload jsonb, p_account_number text, p_amount bigint, p_provider text, p_charge_id text, p_metadata jsonb, p_outcome_prefix text) is
  'webhook-payments: a bank transfer into the virtual account numbered p_account_number, recorded in the inbox once by its key and credited (private.bank_transfer_received), its outcome kept as the prefix and the answer; duplicate for a key already recorded; null, writing nothing, when no account has that number.';
revoke all on function private.webhook_deposit(p_event_key text, p_event_type text, p_payload jsonb, p_account_number text, p_amount bigint, p_provider text, p_charge_id text, p_metadata jsonb, p_outcome_prefix text) from public;
grant execute on function private.webhook_deposit(p_event_key text, p_event_type text, p_payload jsonb, p_account_number text, p_amount bigint, p_provider text, p_charge_id text, p_metadata jsonb, p_outcome_prefix text) to service_role;
