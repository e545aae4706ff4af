// Where the operator console finds the operator API: the base URL of the functions, absolute, or
// relative to the console's page. A deployment replaces this file with its API's URL (docs/operators.md,
// "The console"); the local server (npm start) answers its own, naming /functions/v1.
export default { apiBase: 'http://127.0.0.1:54321/functions/v1' };
