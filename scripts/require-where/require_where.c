/*
 * require_where: refuses UPDATE and DELETE without a WHERE clause, with the message pg-safeupdate
 * gives. Hosted Supabase loads pg-safeupdate for API connections (authenticator and the roles it
 * becomes), so any code an API write reaches (triggers, the functions they call) must never run such a
 * statement. This stand-in lets the tests run those paths under the same rule; it is built in the test
 * run (PGXS) and loaded with session_preload_libraries for the API role of the throwaway cluster only.
 */
#include "postgres.h"

#include "fmgr.h"
#include "parser/analyze.h"
#include "utils/guc.h"

PG_MODULE_MAGIC;

void _PG_init(void);

static post_parse_analyze_hook_type previous_hook = NULL;
static bool require_where_enabled = true;

static void
require_where(ParseState *pstate, Query *query, JumbleState *jstate)
{
	if (previous_hook)
		previous_hook(pstate, query, jstate);

	if (!require_where_enabled || query->jointree == NULL || query->jointree->quals != NULL)
		return;
	if (query->commandType == CMD_UPDATE)
		ereport(ERROR, (errcode(ERRCODE_CARDINALITY_VIOLATION), errmsg("UPDATE requires a WHERE clause")));
	if (query->commandType == CMD_DELETE)
		ereport(ERROR, (errcode(ERRCODE_CARDINALITY_VIOLATION), errmsg("DELETE requires a WHERE clause")));
}

void
_PG_init(void)
{
	DefineCustomBoolVariable("require_where.enabled", "Refuse UPDATE and DELETE without WHERE.", NULL,
							 &require_where_enabled, true, PGC_SUSET, 0, NULL, NULL, NULL);
	previous_hook = post_parse_analyze_hook;
	post_parse_analyze_hook = require_where;
}
