// Drives the real @supabase/auth-js client against a live Strata server:
// sign in with a password, read the session and the user, refresh, the
// error codes of a wrong password and a taken email, sign out.
// Usage: node authjs.mjs BASE_URL EMAIL PASSWORD (run with NODE_PATH or from
// a directory whose node_modules holds @supabase/auth-js).
import { AuthClient } from '@supabase/auth-js'

const [base, email, password] = process.argv.slice(2)
const fail = (msg) => { console.error('FAIL: ' + msg); process.exit(1) }

const client = new AuthClient({ url: base + '/api/auth/v1', autoRefreshToken: false, persistSession: false })

const signIn = await client.signInWithPassword({ email, password })
if (signIn.error) fail('signInWithPassword: ' + signIn.error.message)
const s1 = signIn.data.session
if (!s1 || !s1.access_token || !s1.refresh_token || s1.expires_in !== 3600 || s1.token_type !== 'bearer') fail('session: ' + JSON.stringify(s1))
if (signIn.data.user.email.toLowerCase() !== email.toLowerCase()) fail('user: ' + JSON.stringify(signIn.data.user))

const current = await client.getSession()
if (current.error || current.data.session.access_token !== s1.access_token) fail('getSession')

const user = await client.getUser(s1.access_token)
if (user.error || user.data.user.id !== s1.user.id) fail('getUser: ' + (user.error && user.error.message))

const refreshed = await client.refreshSession({ refresh_token: s1.refresh_token })
if (refreshed.error) fail('refreshSession: ' + refreshed.error.message)
const s2 = refreshed.data.session
if (!s2 || !s2.access_token || s2.refresh_token === s1.refresh_token) fail('refresh did not rotate: ' + JSON.stringify(s2))

const wrong = await client.signInWithPassword({ email, password: password + 'x' })
if (!wrong.error || wrong.error.code !== 'invalid_credentials') fail('wrong password: ' + JSON.stringify(wrong.error))

// Signing up with a taken email fails with GoTrue's code, which apps branch on.
const taken = await client.signUp({ email, password: 'another password' })
if (!taken.error || taken.error.status !== 422 || taken.error.code !== 'user_already_exists') fail('signUp with a taken email: ' + JSON.stringify(taken.error))

// After signing out (this session only), the server no longer vouches for its access token.
const out = await client.admin.signOut(s2.access_token, 'local')
if (out.error) fail('signOut: ' + out.error.message)
// auth-js turns GoTrue's session_not_found into its AuthSessionMissingError.
const gone = await client.getUser(s2.access_token)
if (!gone.error || gone.error.name !== 'AuthSessionMissingError') fail('getUser after signOut: ' + JSON.stringify(gone.error))

console.log(JSON.stringify({ ok: true, user: s1.user.id, tenant: s1.user.app_metadata.tenant_id }))
