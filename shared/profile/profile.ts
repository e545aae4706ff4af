// Profiles and next of kin, always read and written as the caller (row-level security applies).
import type { AuthUser } from '../auth/session.ts';
import { asUser, isPgError, readAsUser, type Tx } from '../core/db.ts';
import { badRequest, conflict, notFound } from '../core/http.ts';
import type { MaritalStatus } from './enums.ts';
import type { ProfileUpdate } from './schema.ts';
import { iso } from '../core/money.ts';

interface ProfileRow {
  id: string;
  first_name: string;
  last_name: string;
  username: string | null;
  phone_number: string;
  address: string | null;
  marital_status: MaritalStatus | null;
  bio: string | null;
  avatar_url: string | null;
  avatar_storage_path: string | null;
  avatar_status: string | null;
  created_at: string;
  updated_at: string;
}

interface NokRow {
  id: string;
  first_name: string;
  last_name: string;
  phone: string;
  address: string;
  relationship: string;
  created_at: string;
}

const nokView = (n: NokRow) => ({
  id: n.id,
  first_name: n.first_name,
  last_name: n.last_name,
  phone: n.phone,
  address: n.address,
  relationship: n.relationship,
  created_at: iso(n.created_at),
});

/** The caller's profile and next of kin (two queries, sent together). */
const profileQueries = (tx: Tx) =>
  [
    tx<ProfileRow[]>`select * from public.profiles where id = (select auth.uid())`,
    tx<NokRow[]>`select * from public.next_of_kin where user_id = (select auth.uid())`,
  ] as const;

/** The caller's profile, read as the caller in one round trip. */
export async function profileGet({ claims }: AuthUser) {
  const [[p], [n]] = await readAsUser(claims, (tx) => [...profileQueries(tx)]);
  return profileView(p, n);
}

function profileView(p: ProfileRow | undefined, n: NokRow | undefined) {
  if (!p) throw notFound('Profile not found');
  return {
    id: p.id,
    first_name: p.first_name,
    last_name: p.last_name,
    username: p.username,
    phone_number: p.phone_number,
    address: p.address,
    marital_status: p.marital_status,
    bio: p.bio,
    avatar: p.avatar_url
      ? { avatar_url: p.avatar_url, storage_path: p.avatar_storage_path, status: p.avatar_status ?? 'active' }
      : null,
    next_of_kin: n ? nokView(n) : null,
    created_at: iso(p.created_at),
    updated_at: iso(p.updated_at),
  };
}

export async function profileUpdate({ claims }: AuthUser, input: ProfileUpdate) {
  const changes: Record<string, unknown> = {};
  for (const key of ['first_name', 'last_name', 'username', 'address', 'marital_status', 'bio'] as const) {
    if (input[key] !== undefined) changes[key] = input[key];
  }
  if (input.avatar_url !== undefined) {
    changes.avatar_url = input.avatar_url;
    changes.avatar_status = 'active';
  }
  if (input.storage_path !== undefined) changes.avatar_storage_path = input.storage_path;
  if (Object.keys(changes).length === 0) {
    throw badRequest('Send at least one field to change', [{
      field: 'body',
      message: 'must contain at least one field',
    }]);
  }
  try {
    return await asUser(claims, async (tx) => {
      await tx`update public.profiles set ${tx(changes)}, updated_at = now() where id = (select auth.uid())`;
      const [[p], [n]] = await Promise.all(profileQueries(tx));
      return profileView(p, n);
    });
  } catch (err) {
    if (isPgError(err, '23505', 'profiles_username_key')) {
      throw conflict('That username is taken', [{ field: 'username', message: 'is already taken' }]);
    }
    throw err;
  }
}

export async function profileNokUpdate(
  { claims }: AuthUser,
  input: { first_name: string; last_name: string; phone: string; address: string; relationship: string },
) {
  return asUser(claims, async (tx) => {
    const [row] = await tx<NokRow[]>`
      insert into public.next_of_kin (user_id, first_name, last_name, phone, address, relationship)
      values ((select auth.uid()), ${input.first_name}, ${input.last_name}, ${input.phone}, ${input.address}, ${input.relationship})
      on conflict (user_id) do update
        set first_name = excluded.first_name, last_name = excluded.last_name, phone = excluded.phone,
            address = excluded.address, relationship = excluded.relationship, updated_at = now()
      returning *`;
    return nokView(row as NokRow);
  });
}
