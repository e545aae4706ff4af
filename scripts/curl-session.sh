# Shell helpers for the curl walkthroughs of README.md and docs/*.md, defined once here. Load them
# into your shell (bash) from the repository root, with `npm start` running in another terminal:
#
#   B=http://127.0.0.1:54321/functions/v1
#   . scripts/curl-session.sh
#
# They read $B and $PG_PORT when they run, so set B first; on other ports (PORT=8000 PG_PORT=5433
# npm start) set B to the new PORT and `export PG_PORT=5433` in this shell too (sms_code reads it).
# Every walkthrough's block is tested as written by tests/integration/docs-curl.clock.test.ts.

# the JSON content type header: curl ... -H "$J"
J='Content-Type: application/json'

# field PATH: prints a field of an answer's data (a JavaScript path after `data`), e.g.
#   curl -s ... | field session.access_token        curl -s ... | field '[0].status'
# An error answer ({"success":false,...}), an answer that is not JSON or a path that is not there:
# the server's status, error and details (or what came instead) on stderr, and exit status 1.
field() {
  local path=${1:-}
  [[ -z $path || $path == \[* ]] || path=.$path
  node -e "
    const text = fs.readFileSync(0, 'utf8');
    const quote = (s) => (s.trim() === '' ? '(nothing)' : s.trim().length > 500 ? s.trim().slice(0, 500) + '...' : s.trim());
    const fail = (problem) => { console.error('field: ' + problem); process.exit(1); };
    let answer;
    try { answer = JSON.parse(text); } catch { fail('the answer is not JSON: ' + quote(text)); }
    if (answer?.success === false) {
      const details = answer.details === undefined ? '' : ', details ' + JSON.stringify(answer.details);
      fail('the server answered an error: status ' + answer.status + ', error ' + JSON.stringify(answer.error) + details);
    }
    if (answer?.success !== true) fail('the answer is not an answer envelope: ' + quote(text));
    let value;
    try { value = answer.data$path; } catch (err) { fail('cannot read data' + process.argv[1] + ' (' + err.message + ') of ' + quote(text)); }
    if (value === undefined) fail('the answer has no data' + process.argv[1] + ': ' + quote(text));
    console.log(value);
  " "$path"
}

# sms_code PHONE: the one-time code last sent to PHONE, if it is still valid, read from the local
# SMS outbox (scripts/sms-code.ts: the database of npm start on 127.0.0.1, port PG_PORT or 54322)
sms_code() { npx --no-install deno run --allow-all scripts/sms-code.ts "$1"; }

# wait_for WHAT TEXT COMMAND...: runs COMMAND every 0.3 s until its output contains TEXT, e.g.
#   wait_for 'the top-up to land' '"balance":5000,' curl -s $B/wallet-get -H "Authorization: Bearer $TOKEN"
# gives up after 30 s (WAIT_FOR_SECONDS) with WHAT and the last output on stderr, and exit status 1.
wait_for() {
  local what=$1 text=$2 out='' deadline=$((SECONDS + ${WAIT_FOR_SECONDS:-30}))
  shift 2
  for (( ; ; )); do
    out=$("$@" 2>&1) || true
    [[ $out == *"$text"* ]] && return 0
    if ((SECONDS >= deadline)); then
      printf 'wait_for: gave up after %s s waiting for %s; the last output of %s:\n%s\n' \
        "${WAIT_FOR_SECONDS:-30}" "$what" "$1" "${out:-(nothing)}" >&2
      return 1
    fi
    sleep 0.3
  done
}

# signup PHONE FIRST_NAME [LAST_NAME]: a new account for PHONE (0... or +234...), through the
# three calls of the README's first session (a code, the code proved, the sign-up) with the
# password "a long passphrase"; prints its access token. LAST_NAME is Okafor unless given.
# A step that fails stops it (exit status 1), with the server's answer on stderr.
signup() {
  local code
  __signup_step "$1" auth-send-otp "{\"phone\":\"$1\",\"context\":\"signup\"}" sent > /dev/null || return 1
  code=$(sms_code "$1") || { echo "signup $1: no code to read" >&2; return 1; }
  __signup_step "$1" auth-verify "{\"phone\":\"$1\",\"context\":\"signup\",\"otp_code\":\"$code\"}" verified \
    > /dev/null || return 1
  __signup_step "$1" auth-signup \
    "{\"phone\":\"$1\",\"first_name\":\"$2\",\"last_name\":\"${3:-Okafor}\",\"password\":\"a long passphrase\"}" \
    session.access_token
}

# __signup_step PHONE ENDPOINT BODY PATH: one call of signup, printing field PATH of its answer
__signup_step() {
  local answer rc=0
  answer=$(curl -s -X POST "$B/$2" -H "$J" -d "$3") || rc=$?
  if ((rc != 0)); then
    echo "signup $1: $2: curl failed (exit $rc); is npm start running at $B?" >&2
    return 1
  fi
  field "$4" <<< "$answer" || { echo "signup $1: $2 failed" >&2; return 1; }
}

# verify_tier1 TOKEN: takes the new account of TOKEN (at tier 0) to KYC tier 1 through npm start's
# KYC sandbox (KYC_PROVIDER=sandbox), as step 6 of the README's first session does by hand:
# kyc-start at level 1, then, as wait_for, until kyc-status shows tier 1 (the sandbox's GREEN review
# arrives at webhook-kyc a moment later). Money moves only from tier 1 (docs/kyc.md, "The identity
# floor"). Prints nothing; a refused kyc-start or no tier 1 within 30 s stops it (exit status 1).
verify_tier1() {
  local answer
  answer=$(curl -s -X POST "$B/kyc-start" -H "Authorization: Bearer $1" -H "$J" -d '{"level":1}') || {
    echo "verify_tier1: kyc-start: curl failed; is npm start running at $B?" >&2
    return 1
  }
  field token <<< "$answer" > /dev/null || { echo 'verify_tier1: kyc-start failed' >&2; return 1; }
  wait_for 'the account to reach tier 1' '"data":{"tier":1,' curl -s "$B/kyc-status" -H "Authorization: Bearer $1"
}

# verify_tier3 TOKEN: takes the account of TOKEN from tier 0 to KYC tier 3 through npm start's
# sandboxes, as docs/kyc.md does by hand: levels 1 and 2 at the KYC sandbox, then a NIN and a BVN
# of its own at the identity sandbox (new numbers each time: a number verifies one account only).
# An operator must be at tier 3 with both numbers bound (docs/operators.md). Prints nothing; no tier
# 3 within 30 s at any step stops it (exit status 1).
verify_tier3() {
  local auth="Authorization: Bearer $1" kind
  verify_tier1 "$1" || return 1
  curl -s -X POST "$B/kyc-start" -H "$auth" -H "$J" -d '{"level":2}' > /dev/null
  wait_for 'the account to reach tier 2' '"data":{"tier":2,' curl -s "$B/kyc-status" -H "$auth" || return 1
  for kind in nin bvn; do
    curl -s -X POST "$B/identity-verify" -H "$auth" -H "$J" \
      -d "{\"type\":\"$kind\",\"id_number\":\"$((RANDOM % 9 + 1))$(shuf -i 100000000-999999999 -n 1)1\"}" > /dev/null
  done
  wait_for 'the account to reach tier 3' '"data":{"tier":3,' curl -s "$B/kyc-status" -H "$auth"
}

# totp_code OTPAUTH_URI: the 6-digit code an authenticator app shows now for the secret of
# OTPAUTH_URI (admin-totp-enrol's otpauth_uri): RFC 6238, HMAC-SHA-1, 30-second steps. For the
# walkthroughs only: an operator keeps the secret in an app, never in a shell.
totp_code() {
  node -e "
    const secret = new URL(process.argv[1]).searchParams.get('secret');
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
    let bits = '';
    for (const c of secret.replace(/=+$/, '')) bits += alphabet.indexOf(c).toString(2).padStart(5, '0');
    const key = Buffer.from(bits.match(/.{8}/g).map((b) => parseInt(b, 2)));
    const step = Buffer.alloc(8);
    step.writeBigUInt64BE(BigInt(Math.floor(Date.now() / 30000)));
    const mac = crypto.createHmac('sha1', key).update(step).digest();
    const at = mac[19] & 15;
    console.log(String((mac.readUInt32BE(at) & 0x7fffffff) % 1e6).padStart(6, '0'));
  " "$1"
}
