/* Host tools (tools implemented by the host, in C) and the host contract: how every answer
 * of tests/contract/host_answers.json is read. */
#include "harness.h"

static void on_tool_cancel(void *user_data, mcpmux_host_request_id request) {
    tool_ctx *t = user_data;
    atomic_store(&t->cancelled_id, request);
    atomic_fetch_add(&t->cancels, 1);
}

static void on_tool_free(void *user_data) {
    tool_ctx *t = user_data;
    atomic_fetch_add(&t->freed, 1);
}

static const char *echo_schema =
    "{\"type\": \"object\", \"properties\": {\"text\": {\"type\": \"string\"},"
    " \"mode\": {\"type\": \"string\"}}, \"required\": [\"text\"]}";

/* Calls c_echo in `mode` and returns the result (caller frees). */
static char *call_echo(mcpmux_pool pool, const char *mode) {
    char args[200];
    snprintf(args, sizeof args, "{\"text\": \"hi\", \"mode\": \"%s\"}", mode);
    char *out = NULL;
    CHECK_STATUS(mcpmux_tools_call(pool, "c_echo", args, NULL, 10000, &out), MCPMUX_OK);
    return out;
}

void test_host_tools(void) {
    mcpmux_pool pool = open_pool();
    static tool_ctx t;
    memset(&t, 0, sizeof t);
    char *out = NULL;

    /* Refused registrations never take the user data. */
    CHECK_STATUS(mcpmux_tools_register(pool, "mcp__x", "d", echo_schema, on_tool, NULL, &t,
                                       on_tool_free, &out),
                 MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK(out == NULL);
    CHECK_STATUS(mcpmux_tools_register(pool, "c_echo", "d", "{", on_tool, NULL, &t,
                                       on_tool_free, NULL),
                 MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(mcpmux_tools_register(pool, "c_echo", "d", "{\"type\": \"string\"}", on_tool,
                                       NULL, &t, on_tool_free, NULL),
                 MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(mcpmux_tools_register(pool, "c_echo", "d", echo_schema, NULL, NULL, &t,
                                       on_tool_free, NULL),
                 MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_tools_register(pool, NULL, "d", echo_schema, on_tool, NULL, &t,
                                       on_tool_free, NULL),
                 MCPMUX_ERR_NULL_ARGUMENT);
    CHECK(atomic_load(&t.freed) == 0);

    CHECK_STATUS(mcpmux_tools_register(pool, "c_echo", "Echo from C", echo_schema, on_tool,
                                       on_tool_cancel, &t, on_tool_free, &out),
                 MCPMUX_OK);
    CHECK_CONTAINS(out, "\"serverName\":\"local\"");
    mcpmux_string_free(out);
    /* Replacing it frees the first registration's user data. */
    CHECK_STATUS(mcpmux_tools_register(pool, "c_echo", "Echo from C", echo_schema, on_tool,
                                       on_tool_cancel, &t, on_tool_free, NULL),
                 MCPMUX_OK);
    CHECK(atomic_load(&t.freed) == 1);

    CHECK_STATUS(mcpmux_tools_list(pool, NULL, NULL, 10000, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "\"id\":\"c_echo\"");
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_tools_search(pool, "echo from C", 5, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "c_echo");
    mcpmux_string_free(out);
    /* A limit of 0 is "not given": core's default. */
    CHECK_STATUS(mcpmux_tools_search(pool, "echo from C", 0, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "c_echo");
    mcpmux_string_free(out);

    out = call_echo(pool, "sync");
    CHECK_CONTAINS(out, "\"text\":\"sync answer\"");
    mcpmux_string_free(out);
    out = call_echo(pool, "object");
    CHECK_CONTAINS(out, "\"structuredContent\":{\"n\":42}");
    mcpmux_string_free(out);
    out = call_echo(pool, "result");
    CHECK_CONTAINS(out, "full result");
    mcpmux_string_free(out);
    out = call_echo(pool, "refuse");
    CHECK_CONTAINS(out, "\"isError\":true");
    CHECK_CONTAINS(out, "nope");
    mcpmux_string_free(out);
    out = call_echo(pool, "bad");
    CHECK_CONTAINS(out, "fixed");
    CHECK(atomic_load(&t.bad_status) == MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK(atomic_load(&t.token_status) == MCPMUX_ERR_INVALID_ARGUMENT);
    mcpmux_string_free(out);
    out = call_echo(pool, "thread");
    CHECK_CONTAINS(out, "from a thread");
    mcpmux_string_free(out);
    if (atomic_load(&t.has_thread)) {
        pthread_join(t.thread, NULL);
    }

    /* Arguments are checked against the schema before the handler runs. */
    int before = atomic_load(&t.calls);
    CHECK_STATUS(mcpmux_tools_call(pool, "c_echo", "{\"text\": 5}", NULL, 10000, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "\"isError\":true");
    CHECK_CONTAINS(out, "invalid arguments");
    mcpmux_string_free(out);
    CHECK(atomic_load(&t.calls) == before);

    /* A call cancelled before the host answers: the host is told, a late answer is
     * "not found". */
    waiter w;
    waiter_init(&w);
    mcpmux_request_id rid = 0;
    CHECK_STATUS(mcpmux_tools_call_async(pool, "c_echo", "{\"text\": \"x\", \"mode\": \"never\"}", NULL,
                                         0, NULL, on_complete, &w, &rid),
                 MCPMUX_OK);
    for (int i = 0; i < 500 && atomic_load(&t.never) == 0; i++) {
        sleep_ms(10);
    }
    mcpmux_host_request_id never = atomic_load(&t.never);
    CHECK(never != 0);
    CHECK_STATUS(mcpmux_host_request_waiting(never), MCPMUX_OK);
    CHECK_STATUS(mcpmux_cancel(rid), MCPMUX_OK);
    CHECK(waiter_wait(&w, 10000));
    CHECK(w.status == MCPMUX_ERR_CANCELLED);
    CHECK(wait_for(&t.cancels, 1, 5000));
    CHECK(atomic_load(&t.cancelled_id) == never);
    CHECK_STATUS(mcpmux_host_request_waiting(never), MCPMUX_ERR_NOT_FOUND);
    CHECK_STATUS(mcpmux_host_request_respond(never, "\"late\""), MCPMUX_ERR_NOT_FOUND);
    waiter_destroy(&w);

    /* Unregistering frees the user data; the tool is gone. */
    CHECK_STATUS(mcpmux_tools_unregister(pool, "c_echo"), MCPMUX_OK);
    CHECK(wait_for(&t.freed, 2, 5000));
    CHECK_STATUS(mcpmux_tools_unregister(pool, "c_echo"), MCPMUX_ERR_NOT_FOUND);
    CHECK_STATUS(mcpmux_tools_call(pool, "c_echo", "{\"text\": \"x\"}", NULL, 5000, &out),
                 MCPMUX_ERR_NOT_FOUND);
    CHECK(out == NULL);
    CHECK_STATUS(mcpmux_tools_unregister(pool, NULL), MCPMUX_ERR_NULL_ARGUMENT);

    /* Closing the pool frees what is still registered. */
    CHECK_STATUS(mcpmux_tools_register(pool, "c_echo", NULL, echo_schema, on_tool, NULL, &t,
                                       on_tool_free, NULL),
                 MCPMUX_OK);
    CHECK_STATUS(mcpmux_pool_close(pool, 0), MCPMUX_OK);
    CHECK(atomic_load(&t.freed) == 3);
    CHECK_STATUS(mcpmux_tools_register(pool, "c_echo", NULL, echo_schema, on_tool, NULL, &t,
                                       on_tool_free, NULL),
                 MCPMUX_ERR_INVALID_HANDLE);
    CHECK_STATUS(mcpmux_tools_unregister(pool, "c_echo"), MCPMUX_ERR_INVALID_HANDLE);
    CHECK(atomic_load(&t.freed) == 3);
}

/* The next tab-separated field of `*rest` (empty fields kept), or "" at the end. */
static char *tab_field(char **rest) {
    char *start = *rest;
    if (!start) {
        return "";
    }
    char *tab = strchr(start, '\t');
    if (tab) {
        *tab = 0;
        *rest = tab + 1;
    } else {
        *rest = NULL;
    }
    return start;
}

/* What the contract tool answers, and how mcpmux_host_request_respond() took it. */
typedef struct {
    const char *answer;
    atomic_int status;
} contract_tool;

static void on_contract_tool(void *user_data, mcpmux_host_request_id request, const char *json,
                             size_t len) {
    contract_tool *c = user_data;
    (void)json;
    (void)len;
    mcpmux_status s = mcpmux_host_request_respond(request, c->answer);
    atomic_store(&c->status, s);
    if (s != MCPMUX_OK) {
        /* A refused answer leaves the request waiting: the host may answer again. */
        CHECK_STATUS(mcpmux_host_request_refuse(request, "the answer was refused"), MCPMUX_OK);
    }
}

/* The host contract: every answer of tests/contract/host_answers.json gives what the table
 * says, through mcpmux_host_answer_read(), and for host tools through a real call too. */
void test_host_answer_contract(void) {
    const char *path = getenv("MCPMUX_CONTRACT_TABLE");
    FILE *table = path ? fopen(path, "r") : NULL;
    if (!table) {
        fprintf(stderr, "  MCPMUX_CONTRACT_TABLE must name the contract table's lines\n");
        CHECK(table != NULL);
        return;
    }
    mcpmux_pool pool = open_pool();
    static contract_tool tool;
    CHECK_STATUS(mcpmux_tools_register(pool, "c_contract", "Answers what the table says",
                                       "{\"type\": \"object\"}", on_contract_tool, NULL, &tool,
                                       NULL, NULL),
                 MCPMUX_OK);
    static char line[16384];
    int rows = 0;
    while (fgets(line, sizeof line, table)) {
        line[strcspn(line, "\n")] = 0;
        char *rest = line;
        char *kind = tab_field(&rest), *answer = tab_field(&rest);
        char *expected = tab_field(&rest), *says = tab_field(&rest);
        int refused = strncmp(expected, "REFUSED:", 8) == 0;
        char *out = NULL;
        mcpmux_status s = mcpmux_host_answer_read(kind, answer, &out);
        if (refused) {
            CHECK_STATUS(s, MCPMUX_ERR_INVALID_ARGUMENT);
            CHECK(strcmp(mcpmux_status_name(s), expected + 8) == 0);
            char *why = mcpmux_last_error();
            CHECK_CONTAINS(why, says);
            mcpmux_string_free(why);
        } else if (s != MCPMUX_OK || !out || strcmp(out, expected) != 0) {
            current_failed = 1;
            fprintf(stderr, "  %s %s: got %s, the table says %s\n", kind, answer,
                    out ? out : mcpmux_status_name(s), expected);
        }
        mcpmux_string_free(out);
        out = NULL;
        if (strcmp(kind, "tool_result") == 0) {
            tool.answer = answer;
            CHECK_STATUS(mcpmux_tools_call(pool, "c_contract", "{}", NULL, 10000, &out), MCPMUX_OK);
            if (refused) {
                CHECK(atomic_load(&tool.status) == MCPMUX_ERR_INVALID_ARGUMENT);
                CHECK_CONTAINS(out, "the answer was refused");
            } else {
                /* Read again as a CallToolResult: the same JSON, in core's key order. */
                char *again = NULL;
                CHECK_STATUS(mcpmux_host_answer_read("tool_result", out, &again), MCPMUX_OK);
                if (!again || strcmp(again, expected) != 0) {
                    current_failed = 1;
                    fprintf(stderr, "  host tool answering %s gave %s, the table says %s\n",
                                answer, again ? again : "nothing", expected);
                }
                mcpmux_string_free(again);
            }
            mcpmux_string_free(out);
        }
        rows++;
    }
    fclose(table);
    CHECK(rows >= 30);
    char *out = NULL;
    CHECK_STATUS(mcpmux_host_answer_read("guess", "1", &out), MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK(out == NULL);
    CHECK_STATUS(mcpmux_host_answer_read("approval", "once", &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "\"once\"");
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_host_answer_read("approval", NULL, &out), MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_pool_close(pool, 0), MCPMUX_OK);
}
