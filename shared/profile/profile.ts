// Profiles and next of kin, always read and written as the caller (row-level security applies).
import type { AuthUser } from '../auth/session.ts';
import { asUser, isPgError, readAsUser, sqlText, type Tx } from '../core/db.ts';
import { PROFILE_NOT_FOUND, USERNAME_TAKEN } from './refusals.ts';
import {
  type NextOfKinResponse,
  nextOfKinResponse,
  type ProfileResponse,
  profileResponse,
  type ProfileUpdate,
} from './schema.ts';
import { answerOf, columnsOf, type RowOf, selectList } from '../core/rows.ts';
import { iso } from '../core/money.ts';
import { JsonText } from '../core/json-text.ts';

/** A profile as stored: the answer's fields, the avatar in three columns, the next of kin apart. */
type ProfileRow = RowOf<ProfileResponse, 'avatar' | 'next_of_kin', {
  avatar_url: string | null;
  avatar_storage_path: string | null;
  avatar_status: string | null;
}>;

const PROFILE_SELECT = selectList(
  columnsOf(profileResponse, {
    computed: ['avatar', 'next_of_kin'],
    stored: ['avatar_url', 'avatar_storage_path', 'avatar_status'],
  }),
);

const NOK_SELECT = selectList(columnsOf(nextOfKinResponse));

const nokView = (n: NextOfKinResponse): NextOfKinResponse => ({ ...n, created_at: iso(n.created_at) });

/** The caller's profile and next of kin (two queries, sent together). */
const profileQueries = (tx: Tx) =>
  [
    sqlText<ProfileRow[]>(tx, `select ${PROFILE_SELECT} from public.profiles where id = (select auth.uid())`),
    sqlText<NextOfKinResponse[]>(
      tx,
      `select ${NOK_SELECT} from public.next_of_kin where user_id = (select auth.uid())`,
    ),
  ] as const;

/** The caller's profile, as Postgres writes it (reads.profile), read as the caller in one round trip. */
export async function profileGet({ claims }: AuthUser): Promise<JsonText<ProfileResponse>> {
  const [[row]] = await readAsUser(
    claims,
    (tx) => [sqlText<{ body: string | null }[]>(tx, 'select reads.profile() as body')],
  );
  if (!row?.body) throw PROFILE_NOT_FOUND.error({});
  return new JsonText(row.body);
}

/**
 * The same answer built here from the rows, as profile-update builds it: what the test of the reads
 * Postgres builds (tests/integration/reads-built.test.ts) compares profileGet's text with.
 */
export async function profileGetAsObject({ claims }: AuthUser) {
  const [[p], [n]] = await readAsUser(claims, (tx) => [...profileQueries(tx)]);
  return profileView(p, n);
}

function profileView(p: ProfileRow | undefined, n: NextOfKinResponse | undefined): ProfileResponse {
  if (!p) throw PROFILE_NOT_FOUND.error({});
  return answerOf(profileResponse, {
    ...p,
    avatar: p.avatar_url
      ? { avatar_url: p.avatar_url, storage_path: p.avatar_storage_path, status: p.avatar_status ?? 'active' }
      : null,
    next_of_kin: n ? nokView(n) : null,
    created_at: iso(p.created_at),
    updated_at: iso(p.updated_at),
  });
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
  // never empty: profileUpdateBody refuses a body without a field (minFields)
  try {
    return await asUser(claims, async (tx) => {
      await tx`update public.profiles set ${tx(changes)}, updated_at = now() where id = (select auth.uid())`;
      const [[p], [n]] = await Promise.all(profileQueries(tx));
      return profileView(p, n);
    });
  } catch (err) {
    if (isPgError(err, '23505', 'profiles_username_key')) {
      throw USERNAME_TAKEN.error({});
    }
    throw err;
  }
}

export async function profileNokUpdate(
  { claims }: AuthUser,
  input: { first_name: string; last_name: string; phone: string; address: string; relationship: string },
) {
  return asUser(claims, async (tx) => {
    const [row] = await tx<NextOfKinResponse[]>`
      insert into public.next_of_kin (user_id, first_name, last_name, phone, address, relationship)
      values ((select auth.uid()), ${input.first_name}, ${input.last_name}, ${input.phone}, ${input.address}, ${input.relationship})
      on conflict (user_id) do update
        set first_name = excluded.first_name, last_name = excluded.last_name, phone = excluded.phone,
            address = excluded.address, relationship = excluded.relationship, updated_at = now()
      returning ${tx.unsafe(NOK_SELECT)}`;
    return nokView(row as NextOfKinResponse);
  });
}
