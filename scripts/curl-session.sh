# Shell helpers for the curl walkthroughs of README.md and docs/*.md, defined once here. Load them
# into your shell (bash) from the repository root, with `npm start` running in another terminal:
#
#   B=http://127.0.0.1:54321/functions/v1
#   . scripts/curl-session.sh
#
# They read $B when they run, so set B first (another PORT: another B). Every walkthrough's block
# is tested as written by tests/integration/docs-curl.clock.test.ts.

# the JSON content type header: curl ... -H "$J"
J='Content-Type: application/json'

# field PATH: prints a field of an answer's data (a JavaScript path after `data`), e.g.
#   curl -s ... | field session.access_token        curl -s ... | field '[0].status'
field() {
  local path=${1:-}
  [[ -z $path || $path == \[* ]] || path=.$path
  node -p "JSON.parse(fs.readFileSync(0, 'utf8')).data$path"
}

# sms_code PHONE: the last one-time code sent to PHONE, read from the local SMS outbox
# (scripts/sms-code.ts; the database of npm start, PG_PORT or 54322, or DATABASE_URL)
sms_code() { npx --no-install deno run --allow-all scripts/sms-code.ts "$1"; }

# signup PHONE FIRST_NAME [LAST_NAME]: a new account for PHONE (0... or +234...), through the
# three calls of the README's first session (a code, the code proved, the sign-up) with the
# password "a long passphrase"; prints its access token. LAST_NAME is Okafor unless given.
signup() {
  curl -s -X POST "$B/auth-send-otp" -H "$J" -d "{\"phone\":\"$1\",\"context\":\"signup\"}" > /dev/null
  curl -s -X POST "$B/auth-verify" -H "$J" \
    -d "{\"phone\":\"$1\",\"context\":\"signup\",\"otp_code\":\"$(sms_code "$1")\"}" > /dev/null
  curl -s -X POST "$B/auth-signup" -H "$J" \
    -d "{\"phone\":\"$1\",\"first_name\":\"$2\",\"last_name\":\"${3:-Okafor}\",\"password\":\"a long passphrase\"}" |
    field session.access_token
}
