/* The agent with a provider implemented in C: runs with tools, streamed tokens and
 * approvals, sampling handled by the agent, denials, cancelling, and bad JSON. */
#include "harness.h"

/* --- a provider implemented in C ------------------------------------------------- */

enum { SCRIPT_TOOLS, SCRIPT_HANG, SCRIPT_BAD_JSON, SCRIPT_REFUSE, SCRIPT_SAMPLE };

typedef struct {
    int script;
    atomic_int turns;
    atomic_int freed;
    atomic_int cancels;
    atomic_ullong hanging;
    atomic_int saw_sum;       /* a later request carried the add tool's result */
    atomic_int saw_host_tool; /* ... and the host tool's */
    atomic_int saw_denied;
    atomic_int saw_sampling; /* a request carried a server's sampling prompt, without tools */
    atomic_int bad_json_status, bad_shape_status;
    char bad_shape_msg[512];
    pthread_t thread;
    atomic_int has_thread;
} provider_ctx;

static const char *first_turn =
    "{\"content\": [{\"type\": \"text\", \"text\": \"Let me add.\"},"
    " {\"type\": \"tool_use\", \"id\": \"call-1\", \"name\": \"mcp__demo__add\","
    " \"input\": {\"a\": 2, \"b\": 40}},"
    " {\"type\": \"tool_use\", \"id\": \"call-2\", \"name\": \"c_shout\","
    " \"input\": {\"text\": \"hey\"}}],"
    " \"stopReason\": \"tool_use\", \"usage\": {\"inputTokens\": 10, \"outputTokens\": 5}}";

static void *final_turn(void *arg) {
    mcpmux_host_request_id id = *(mcpmux_host_request_id *)arg;
    free(arg);
    sleep_ms(20);
    mcpmux_host_request_token(id, "The sum ");
    mcpmux_host_request_token(id, "is 42");
    mcpmux_host_request_respond(
        id, "{\"content\": [{\"type\": \"text\", \"text\": \"The sum is 42\"}],"
            " \"stopReason\": \"end_turn\", \"usage\": {\"inputTokens\": 20, \"outputTokens\": 4}}");
    return NULL;
}

static void on_chat(void *user_data, mcpmux_host_request_id request, const char *json,
                    size_t len) {
    provider_ctx *p = user_data;
    (void)len;
    int turn = atomic_fetch_add(&p->turns, 1) + 1;
    switch (p->script) {
    case SCRIPT_TOOLS:
        if (turn == 1) {
            mcpmux_host_request_respond(request, first_turn); /* answered at once */
        } else {
            if (strstr(json, "\"content\":\"42\"")) {
                atomic_store(&p->saw_sum, 1);
            }
            if (strstr(json, "\"content\":\"HEY\"")) {
                atomic_store(&p->saw_host_tool, 1);
            }
            if (strstr(json, "The user denied the call of 'mcp__demo__add'")) {
                atomic_store(&p->saw_denied, 1);
            }
            /* answered later, from another thread, with streamed text first */
            mcpmux_host_request_id *arg = malloc(sizeof *arg);
            *arg = request;
            pthread_create(&p->thread, NULL, final_turn, arg);
            atomic_store(&p->has_thread, 1);
        }
        break;
    case SCRIPT_HANG:
        atomic_store(&p->hanging, request);
        break;
    case SCRIPT_BAD_JSON:
        atomic_store(&p->bad_json_status, mcpmux_host_request_respond(request, "not json"));
        atomic_store(&p->bad_shape_status,
                     mcpmux_host_request_respond(request, "{\"text\": \"no content\"}"));
        mcpmux_last_error_message(p->bad_shape_msg, sizeof p->bad_shape_msg, NULL);
        mcpmux_host_request_respond(request,
                                    "{\"content\": [{\"type\": \"text\", \"text\": \"fine\"}]}");
        break;
    case SCRIPT_REFUSE:
        mcpmux_host_request_refuse(request, "model offline");
        break;
    case SCRIPT_SAMPLE:
        if (strstr(json, "Say hi") && strstr(json, "\"tools\":[]")) {
            atomic_store(&p->saw_sampling, 1);
        }
        mcpmux_host_request_respond(
            request, "{\"content\": [{\"type\": \"text\", \"text\": \"hi from C\"}]}");
        break;
    }
}

static void on_chat_cancel(void *user_data, mcpmux_host_request_id request) {
    provider_ctx *p = user_data;
    (void)request;
    atomic_fetch_add(&p->cancels, 1);
}

static void on_provider_free(void *user_data) {
    provider_ctx *p = user_data;
    atomic_fetch_add(&p->freed, 1);
}

static void provider_join(provider_ctx *p) {
    if (atomic_exchange(&p->has_thread, 0)) {
        pthread_join(p->thread, NULL);
    }
}

/* A run's user data: the waiter first (on_complete casts to it), then the rest. */
typedef struct {
    waiter w;
    const char *approval; /* answer to approval questions; NULL: refuse */
    atomic_int approvals;
    pthread_mutex_t mu;
    char tokens[256];
} run_ctx;

static void run_init(run_ctx *r, const char *approval) {
    waiter_init(&r->w);
    r->approval = approval;
    atomic_store(&r->approvals, 0);
    pthread_mutex_init(&r->mu, NULL);
    r->tokens[0] = '\0';
}

static void run_destroy(run_ctx *r) {
    waiter_destroy(&r->w);
    pthread_mutex_destroy(&r->mu);
}

static void on_run_token(void *user_data, const char *text, size_t len) {
    run_ctx *r = user_data;
    pthread_mutex_lock(&r->mu);
    size_t have = strlen(r->tokens);
    if (have + len < sizeof r->tokens) {
        memcpy(r->tokens + have, text, len + 1);
    }
    pthread_mutex_unlock(&r->mu);
}

static void on_run_approve(void *user_data, mcpmux_host_request_id request, const char *json,
                           size_t len) {
    run_ctx *r = user_data;
    (void)len;
    if (strstr(json, "\"toolId\":\"mcp__demo__add\"")) {
        atomic_fetch_add(&r->approvals, 1);
    }
    if (r->approval) {
        mcpmux_host_request_respond(request, r->approval);
    } else {
        mcpmux_host_request_refuse(request, NULL);
    }
}

static const char *shout_schema =
    "{\"type\": \"object\", \"properties\": {\"text\": {\"type\": \"string\"}}}";

/* A pool with the test server (its tools listed, so the agent knows whose they are) and
 * the host tool c_shout. */
static mcpmux_pool agent_pool(tool_ctx *t) {
    mcpmux_pool pool = open_pool();
    add_test_server(pool, "demo", "");
    char *out = NULL;
    CHECK_STATUS(mcpmux_tools_list(pool, "demo", NULL, 20000, &out), MCPMUX_OK);
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_tools_register(pool, "c_shout", "Shout", shout_schema, on_tool, NULL, t,
                                       NULL, NULL),
                 MCPMUX_OK);
    return pool;
}

static mcpmux_agent new_agent(mcpmux_pool pool, provider_ctx *p, mcpmux_provider *out_provider) {
    mcpmux_provider provider = 0;
    CHECK_STATUS(mcpmux_provider_new_host("c-llm", "m1", on_chat, on_chat_cancel, p,
                                          on_provider_free, &provider),
                 MCPMUX_OK);
    mcpmux_agent agent = 0;
    CHECK_STATUS(mcpmux_agent_new(pool, provider, "{\"maxIterations\": 4}", &agent), MCPMUX_OK);
    *out_provider = provider;
    return agent;
}

void test_agent_host_provider(void) {
    static tool_ctx t;
    memset(&t, 0, sizeof t);
    mcpmux_pool pool = agent_pool(&t);
    static provider_ctx p;
    memset(&p, 0, sizeof p);
    p.script = SCRIPT_TOOLS;
    mcpmux_provider provider = 0;
    mcpmux_agent agent = new_agent(pool, &p, &provider);
    char *out = NULL;
    CHECK_STATUS(mcpmux_provider_info(provider, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "\"model\":\"m1\"");
    mcpmux_string_free(out);

    run_ctx r;
    run_init(&r, "\"once\"");
    mcpmux_request_id rid = 0;
    AWAIT(&r.w, mcpmux_agent_run(agent, "What is 2 + 40?", NULL, on_run_token, on_run_approve,
                                 on_complete, &r, &rid));
    provider_join(&p);
    CHECK(r.w.status == MCPMUX_OK);
    CHECK_CONTAINS(r.w.json, "\"text\":\"The sum is 42\"");
    CHECK_CONTAINS(r.w.json, "\"stop\":\"finished\"");
    CHECK_CONTAINS(r.w.json, "\"iterations\":2");
    CHECK_CONTAINS(r.w.json, "\"inputTokens\":30");
    CHECK(atomic_load(&p.saw_sum) == 1);
    CHECK(atomic_load(&p.saw_host_tool) == 1);
    CHECK(atomic_load(&r.approvals) == 1);
    CHECK_CONTAINS(r.tokens, "The sum is 42");
    CHECK_STATUS(mcpmux_cancel(rid), MCPMUX_ERR_NOT_FOUND);
    run_destroy(&r);

    /* The blocking variant, with the model switched. */
    CHECK_STATUS(mcpmux_agent_set_model(agent, "m2"), MCPMUX_OK);
    CHECK_STATUS(mcpmux_agent_info(agent, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "\"model\":\"m2\"");
    CHECK_CONTAINS(out, "\"provider\":\"c-llm\"");
    CHECK_CONTAINS(out, "systemPrompt");
    mcpmux_string_free(out);
    atomic_store(&p.turns, 0);
    run_init(&r, "\"always\"");
    CHECK_STATUS(mcpmux_agent_run_wait(agent, "Again?", "{\"history\": []}", NULL, on_run_approve,
                                       &r, 30000, &out),
                 MCPMUX_OK);
    provider_join(&p);
    CHECK_CONTAINS(out, "The sum is 42");
    mcpmux_string_free(out);
    CHECK(atomic_load(&r.approvals) == 1);
    run_destroy(&r);

    /* The handles are independent; the provider's user data goes with the last of them. */
    CHECK_STATUS(mcpmux_provider_free(provider), MCPMUX_OK);
    CHECK_STATUS(mcpmux_provider_free(provider), MCPMUX_ERR_INVALID_HANDLE);
    CHECK(atomic_load(&p.freed) == 0);
    CHECK_STATUS(mcpmux_agent_free(agent), MCPMUX_OK);
    CHECK(wait_for(&p.freed, 1, 5000));
    CHECK_STATUS(mcpmux_agent_free(agent), MCPMUX_ERR_INVALID_HANDLE);
    CHECK_STATUS(mcpmux_agent_set_model(agent, "m3"), MCPMUX_ERR_INVALID_HANDLE);
    CHECK_STATUS(mcpmux_pool_close(pool, 0), MCPMUX_OK);
}

/* Counts sampling approvals and answers them with `r->approval` (NULL: refuse). */
static void on_sampling_approve(void *user_data, mcpmux_host_request_id request,
                                const char *json, size_t len) {
    run_ctx *r = user_data;
    (void)len;
    if (strstr(json, "\"toolId\":\"sampling/createMessage\"") && strstr(json, "Say hi")) {
        atomic_fetch_add(&r->approvals, 1);
    }
    if (r->approval) {
        mcpmux_host_request_respond(request, r->approval);
    } else {
        mcpmux_host_request_refuse(request, NULL);
    }
}

void test_agent_handles_sampling(void) {
    static tool_ctx t;
    memset(&t, 0, sizeof t);
    mcpmux_pool pool = agent_pool(&t);
    static provider_ctx p;
    memset(&p, 0, sizeof p);
    p.script = SCRIPT_SAMPLE;
    mcpmux_provider provider = 0;
    mcpmux_agent agent = new_agent(pool, &p, &provider);
    mcpmux_provider_free(provider);
    CHECK_STATUS(mcpmux_agent_handle_sampling(0, NULL, NULL, NULL), MCPMUX_ERR_INVALID_HANDLE);

    /* The test server's `ask` tool samples through an input round: the C provider answers. */
    static run_ctx r;
    run_init(&r, "\"once\"");
    CHECK_STATUS(mcpmux_agent_handle_sampling(agent, on_sampling_approve, &r, NULL), MCPMUX_OK);
    char *out = NULL;
    CHECK_STATUS(mcpmux_tools_call(pool, "mcp__demo__ask", "{}", NULL, 20000, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "sample=\\\"hi from C\\\"");
    mcpmux_string_free(out);
    CHECK(atomic_load(&p.saw_sampling) == 1);
    CHECK(atomic_load(&r.approvals) == 1);

    /* A denied approval refuses the server: its tool fails, and the model is not asked. */
    r.approval = "\"deny\"";
    atomic_store(&p.turns, 0);
    out = NULL;
    CHECK(mcpmux_tools_call(pool, "mcp__demo__ask", "{}", NULL, 20000, &out) != MCPMUX_OK);
    mcpmux_string_free(out);
    CHECK(atomic_load(&p.turns) == 0);
    CHECK(atomic_load(&r.approvals) == 2);

    CHECK_STATUS(mcpmux_agent_free(agent), MCPMUX_OK);
    CHECK_STATUS(mcpmux_pool_close(pool, 0), MCPMUX_OK);
    run_destroy(&r);
}

void test_agent_approval_deny(void) {
    static tool_ctx t;
    memset(&t, 0, sizeof t);
    mcpmux_pool pool = agent_pool(&t);
    static provider_ctx p;
    memset(&p, 0, sizeof p);
    p.script = SCRIPT_TOOLS;
    mcpmux_provider provider = 0;
    mcpmux_agent agent = new_agent(pool, &p, &provider);
    mcpmux_provider_free(provider);

    run_ctx r;
    run_init(&r, "\"deny\"");
    AWAIT(&r.w, mcpmux_agent_run(agent, "What is 2 + 40?", NULL, NULL, on_run_approve,
                                 on_complete, &r, NULL));
    provider_join(&p);
    CHECK(r.w.status == MCPMUX_OK);
    CHECK(atomic_load(&r.approvals) == 1);
    CHECK(atomic_load(&p.saw_denied) == 1);
    CHECK(atomic_load(&p.saw_sum) == 0);
    CHECK(atomic_load(&p.saw_host_tool) == 1); /* host tools need no approval */
    run_destroy(&r);

    /* Refusing is denying; so is having no approval callback. */
    atomic_store(&p.turns, 0);
    atomic_store(&p.saw_denied, 0);
    run_init(&r, NULL);
    AWAIT(&r.w, mcpmux_agent_run(agent, "What is 2 + 40?", NULL, NULL, on_run_approve,
                                 on_complete, &r, NULL));
    provider_join(&p);
    CHECK(atomic_load(&p.saw_denied) == 1);
    run_destroy(&r);
    atomic_store(&p.turns, 0);
    atomic_store(&p.saw_denied, 0);
    run_init(&r, NULL);
    AWAIT(&r.w, mcpmux_agent_run(agent, "What is 2 + 40?", NULL, NULL, NULL, on_complete, &r,
                                 NULL));
    provider_join(&p);
    CHECK(atomic_load(&p.saw_denied) == 1);
    CHECK(atomic_load(&p.saw_sum) == 0);
    run_destroy(&r);

    CHECK_STATUS(mcpmux_agent_free(agent), MCPMUX_OK);
    CHECK(wait_for(&p.freed, 1, 5000));
    CHECK_STATUS(mcpmux_pool_close(pool, 0), MCPMUX_OK);
}

void test_agent_cancel(void) {
    mcpmux_pool pool = open_pool();
    static provider_ctx p;
    memset(&p, 0, sizeof p);
    p.script = SCRIPT_HANG;
    mcpmux_provider provider = 0;
    mcpmux_agent agent = new_agent(pool, &p, &provider);

    run_ctx r;
    run_init(&r, NULL);
    mcpmux_request_id rid = 0;
    CHECK_STATUS(mcpmux_agent_run(agent, "Wait forever", NULL, on_run_token, NULL, on_complete,
                                  &r, &rid),
                 MCPMUX_OK);
    for (int i = 0; i < 1000 && atomic_load(&p.hanging) == 0; i++) {
        sleep_ms(10);
    }
    mcpmux_host_request_id hanging = atomic_load(&p.hanging);
    CHECK(hanging != 0);
    CHECK_STATUS(mcpmux_host_request_waiting(hanging), MCPMUX_OK);
    CHECK_STATUS(mcpmux_host_request_token(hanging, "partial "), MCPMUX_OK);
    CHECK_STATUS(mcpmux_cancel(rid), MCPMUX_OK);
    CHECK(waiter_wait(&r.w, 10000));
    CHECK(r.w.status == MCPMUX_OK);
    CHECK_CONTAINS(r.w.json, "\"stop\":\"cancelled\"");
    CHECK_CONTAINS(r.w.json, "Wait forever"); /* the transcript so far */
    CHECK_CONTAINS(r.tokens, "partial ");
    CHECK(wait_for(&p.cancels, 1, 5000));
    CHECK_STATUS(mcpmux_host_request_waiting(hanging), MCPMUX_ERR_NOT_FOUND);
    CHECK_STATUS(mcpmux_host_request_respond(hanging, "{\"content\": []}"), MCPMUX_ERR_NOT_FOUND);
    CHECK_STATUS(mcpmux_host_request_token(hanging, "late"), MCPMUX_ERR_NOT_FOUND);
    CHECK_STATUS(mcpmux_cancel(rid), MCPMUX_ERR_NOT_FOUND);
    run_destroy(&r);

    /* The blocking variant's timeout abandons the run; the host is told too. */
    atomic_store(&p.hanging, 0);
    char *out = NULL;
    CHECK_STATUS(mcpmux_agent_run_wait(agent, "Wait", NULL, NULL, NULL, NULL, 300, &out),
                 MCPMUX_ERR_TIMEOUT);
    CHECK(out == NULL);
    CHECK(wait_for(&p.cancels, 2, 5000));

    /* Closing the pool ends a run that is waiting. */
    run_init(&r, NULL);
    atomic_store(&p.hanging, 0);
    CHECK_STATUS(mcpmux_agent_run(agent, "Wait", NULL, NULL, NULL, on_complete, &r, NULL),
                 MCPMUX_OK);
    for (int i = 0; i < 1000 && atomic_load(&p.hanging) == 0; i++) {
        sleep_ms(10);
    }
    CHECK_STATUS(mcpmux_pool_close(pool, 0), MCPMUX_OK);
    CHECK(r.w.done == 1);
    CHECK(r.w.status == MCPMUX_ERR_SHUTTING_DOWN);
    CHECK(wait_for(&p.cancels, 3, 5000));
    run_destroy(&r);
    CHECK_STATUS(mcpmux_agent_run(agent, "x", NULL, NULL, NULL, on_complete, &r, NULL),
                 MCPMUX_ERR_SHUTTING_DOWN);
    CHECK_STATUS(mcpmux_agent_free(agent), MCPMUX_OK);
    CHECK_STATUS(mcpmux_provider_free(provider), MCPMUX_OK);
    CHECK(wait_for(&p.freed, 1, 5000));
}

void test_agent_bad_json(void) {
    mcpmux_provider provider = 0;
    char msg[512];
    /* Provider configs. */
    CHECK_STATUS(mcpmux_provider_create("{", &provider), MCPMUX_ERR_INVALID_ARGUMENT);
    mcpmux_last_error_message(msg, sizeof msg, NULL);
    CHECK_CONTAINS(msg, "config_json");
    CHECK_STATUS(mcpmux_provider_create("{\"type\": \"nope\", \"model\": \"m\"}", &provider),
                 MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(mcpmux_provider_create("{\"type\": \"openai\"}", &provider),
                 MCPMUX_ERR_INVALID_ARGUMENT);
    mcpmux_last_error_message(msg, sizeof msg, NULL);
    CHECK_CONTAINS(msg, "model");
    CHECK(provider == 0);
    CHECK_STATUS(mcpmux_provider_create(NULL, &provider), MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_provider_create("{}", NULL), MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_provider_create("{\"type\": \"openai\", \"model\": \"gpt-x\","
                                        " \"baseUrl\": \"http://127.0.0.1:9/v1\"}",
                                        &provider),
                 MCPMUX_OK);
    char *out = NULL;
    CHECK_STATUS(mcpmux_provider_info(provider, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "\"model\":\"gpt-x\"");
    mcpmux_string_free(out);
    mcpmux_provider unused = 0;
    CHECK_STATUS(mcpmux_provider_new_host(NULL, NULL, NULL, NULL, NULL, NULL, &unused),
                 MCPMUX_ERR_NULL_ARGUMENT);
    CHECK(unused == 0);
    CHECK_STATUS(mcpmux_provider_new_host(NULL, NULL, on_chat, NULL, NULL, NULL, NULL),
                 MCPMUX_ERR_NULL_ARGUMENT);

    mcpmux_pool pool = open_pool();
    mcpmux_agent agent = 0;
    /* Agent options. */
    CHECK_STATUS(mcpmux_agent_new(pool, provider, "{\"maxIterations\": \"many\"}", &agent),
                 MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(mcpmux_agent_new(pool, provider, "{\"colour\": 1}", &agent),
                 MCPMUX_ERR_INVALID_ARGUMENT);
    mcpmux_last_error_message(msg, sizeof msg, NULL);
    CHECK_CONTAINS(msg, "colour");
    CHECK(agent == 0);
    CHECK_STATUS(mcpmux_agent_new(pool, pool, NULL, &agent), MCPMUX_ERR_INVALID_HANDLE);
    CHECK_STATUS(mcpmux_agent_new(provider, provider, NULL, &agent), MCPMUX_ERR_INVALID_HANDLE);
    mcpmux_provider_free(provider);

    static provider_ctx p;
    memset(&p, 0, sizeof p);
    p.script = SCRIPT_BAD_JSON;
    agent = new_agent(pool, &p, &provider);
    mcpmux_provider_free(provider);
    /* Run params. */
    waiter w;
    waiter_init(&w);
    CHECK_STATUS(mcpmux_agent_run(agent, "hi", "{", NULL, NULL, on_complete, &w, NULL),
                 MCPMUX_ERR_INVALID_ARGUMENT);
    mcpmux_last_error_message(msg, sizeof msg, NULL);
    CHECK_CONTAINS(msg, "params_json");
    CHECK_STATUS(mcpmux_agent_run(agent, "hi", "{\"servers\": {\"enabled\": 3}}", NULL, NULL,
                                  on_complete, &w, NULL),
                 MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(mcpmux_agent_run(agent, "\xff", NULL, NULL, NULL, on_complete, &w, NULL),
                 MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(mcpmux_agent_run(agent, NULL, NULL, NULL, NULL, on_complete, &w, NULL),
                 MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_agent_run(agent, "hi", NULL, NULL, NULL, NULL, &w, NULL),
                 MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_agent_run(pool, "hi", NULL, NULL, NULL, on_complete, &w, NULL),
                 MCPMUX_ERR_INVALID_HANDLE);
    CHECK(w.done == 0);
    /* The provider's answers: bad JSON and a bad shape are refused, the request waits. */
    AWAIT(&w, mcpmux_agent_run(agent, "hi", NULL, NULL, NULL, on_complete, &w, NULL));
    CHECK(w.status == MCPMUX_OK);
    CHECK_CONTAINS(w.json, "\"text\":\"fine\"");
    CHECK(atomic_load(&p.bad_json_status) == MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK(atomic_load(&p.bad_shape_status) == MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(p.bad_shape_msg, "invalid response");
    waiter_destroy(&w);
    /* A provider that refuses fails the run with its reason. */
    p.script = SCRIPT_REFUSE;
    waiter_init(&w);
    AWAIT(&w, mcpmux_agent_run(agent, "hi", NULL, NULL, NULL, on_complete, &w, NULL));
    CHECK(w.status == MCPMUX_ERR_CONNECTION);
    CHECK_CONTAINS(w.json, "model offline");
    waiter_destroy(&w);

    CHECK_STATUS(mcpmux_agent_set_model(agent, NULL), MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_agent_info(agent, NULL), MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_agent_free(agent), MCPMUX_OK);
    CHECK(wait_for(&p.freed, 1, 5000));
    CHECK_STATUS(mcpmux_agent_free(0), MCPMUX_OK);
    CHECK_STATUS(mcpmux_provider_free(0), MCPMUX_OK);
    CHECK_STATUS(mcpmux_conversation_free(0), MCPMUX_OK);
    CHECK_STATUS(mcpmux_host_request_token(12345678, NULL), MCPMUX_ERR_NULL_ARGUMENT);
    CHECK_STATUS(mcpmux_host_request_token(12345678, "x"), MCPMUX_ERR_NOT_FOUND);
    CHECK_STATUS(mcpmux_host_request_waiting(12345678), MCPMUX_ERR_NOT_FOUND);
    CHECK_STATUS(mcpmux_pool_close(pool, 0), MCPMUX_OK);
}
