-- =============================================================================================
-- Profiles and next of kin: what a user tells about themselves. Public tables behind row-level
-- security: a user reads and edits their own rows only (the profile's id is the account's).
-- =============================================================================================

-- =============================================================================================
-- Profiles
-- =============================================================================================

create type public.marital_status as enum ('single', 'married', 'divorced', 'widowed');

create table public.profiles (
  id uuid primary key references private.users (id) on delete cascade,
  first_name text not null check (char_length(first_name) between 1 and 100),
  last_name text not null check (char_length(last_name) between 1 and 100),
  username text check (username ~ '^[a-zA-Z0-9_]{3,30}$'),
  phone_number text not null unique check (phone_number ~ '^\+234[0-9]{10}$'),
  address text check (char_length(address) <= 500),
  marital_status public.marital_status,
  bio text check (char_length(bio) <= 300),
  avatar_url text,
  avatar_storage_path text,
  avatar_status text check (avatar_status in ('active')),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
comment on table public.profiles is
  'What a user tells about themselves; one row per account (same id). Users read and edit their own.';
create unique index profiles_username_key on public.profiles (lower(username));
alter table public.profiles enable row level security;

-- What the API roles may touch at all; policies then narrow it to the caller's own rows.
revoke all on public.profiles from anon, authenticated;
grant select on public.profiles to authenticated;
grant update (first_name, last_name, username, address, marital_status, bio, avatar_url,
              avatar_storage_path, avatar_status, updated_at)
  on public.profiles to authenticated;
grant select, insert, update, delete on public.profiles to service_role;

create policy "Users can read their own profile"
  on public.profiles for select to authenticated
  using (id = (select auth.uid()));

create policy "Users can update their own profile"
  on public.profiles for update to authenticated
  using (id = (select auth.uid()))
  with check (id = (select auth.uid()));

-- =============================================================================================
-- Next of kin
-- =============================================================================================

create table public.next_of_kin (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null unique references public.profiles (id) on delete cascade,
  first_name text not null check (char_length(first_name) between 1 and 100),
  last_name text not null check (char_length(last_name) between 1 and 100),
  phone text not null check (char_length(phone) between 1 and 20),
  address text not null check (char_length(address) between 1 and 500),
  relationship text not null check (char_length(relationship) between 1 and 100),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
comment on table public.next_of_kin is
  'A user''s next of kin (at most one). Users read, add and edit their own.';
alter table public.next_of_kin enable row level security;

revoke all on public.next_of_kin from anon, authenticated;
grant select, insert, update on public.next_of_kin to authenticated;
grant select, insert, update, delete on public.next_of_kin to service_role;

create policy "Users can read their own next of kin"
  on public.next_of_kin for select to authenticated
  using (user_id = (select auth.uid()));

create policy "Users can add their own next of kin"
  on public.next_of_kin for insert to authenticated
  with check (user_id = (select auth.uid()));

create policy "Users can update their own next of kin"
  on public.next_of_kin for update to authenticated
  using (user_id = (select auth.uid()))
  with check (user_id = (select auth.uid()));
