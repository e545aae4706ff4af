-- =============================================================================================
-- The operator audit: every operator action and every opening of a user's picture or an
-- escrow's timeline, with the operator's reason (docs/operators.md#the-audit)
-- =============================================================================================
-- private.admin_audit (append-only since 20261124000300_admins) gains the reason the operator
-- gave. Rows from before have none. private.operator_record is how every operator endpoint writes
-- it, in the transaction of what it records: an action without its row cannot commit.

alter table private.admin_audit
  add column reason text check (reason is null or char_length(reason) between 10 and 2000);
comment on column private.admin_audit.reason is
  'Why the operator acted or looked, in their words (10-500 characters from the API; a dispute''s resolution up to '
  '2,000); null for rows written before reasons were asked for and for the grant script''s rows.';

-- Appends one audit row for p_operator, who must hold one of p_roles now (any role when null):
-- the operator's matching rows are share-locked until the caller's transaction ends, so a revoke
-- running at the same moment waits for the action, and an action after the revoke is refused
-- (404 operator_not_found: the endpoint's gate had let them in a moment before). p_facts holds ids
-- and statuses only (identity numbers masked by the caller). Returns the row's id.
create function private.operator_record(
  p_operator uuid,
  p_roles text[],
  p_action text,
  p_target_type text,
  p_target uuid,
  p_reason text,
  p_facts jsonb default '{}'::jsonb
)
returns bigint
language plpgsql
set search_path = ''
as $$
declare
  v_id bigint;
begin
  perform 1 from private.operators o
   where o.user_id = p_operator and (p_roles is null or o.role = any (p_roles))
   for share;
  if not found then
    perform private.refuse(404, 'operator_not_found');
  end if;
  insert into private.admin_audit (admin_id, action, target_type, target_id, reason, details)
  values (p_operator, p_action, p_target_type, p_target, p_reason, coalesce(p_facts, '{}'::jsonb))
  returning id into v_id;
  return v_id;
end
$$;
comment on function private.operator_record(uuid, text[], text, text, uuid, text, jsonb) is
  'Appends an operator action or read to private.admin_audit in the caller''s transaction, share-locking the '
  'operator''s rows in p_roles (any role when null); 404 operator_not_found when they hold none of them now.';
revoke execute on function private.operator_record(uuid, text[], text, text, uuid, text, jsonb)
  from public, anon, authenticated;
grant execute on function private.operator_record(uuid, text[], text, text, uuid, text, jsonb) to service_role;
