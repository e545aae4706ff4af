// The refusals of the disputes area: each code declared once (docs/errors.md lists them all).
import { refusal } from '../core/http.ts';

void refusal;
