/* @modelcontextprotocol/server-everything, the reference server: tools, completions,
 * resources, prompts, roots, sampling and elicitation. */
#include "harness.h"

/* Calls server-everything's get-roots-list until its answer contains `want` (the tool
 * appears only once the server has seen the client's capabilities). */
static int everything_sees_root(mcpmux_pool pool, const char *want) {
    for (int i = 0; i < 100; i++) {
        char *out = NULL;
        mcpmux_status s = mcpmux_tools_call(pool, "mcp__everything__get-roots-list", "{}", NULL, 10000, &out);
        int found = s == MCPMUX_OK && out && strstr(out, want);
        mcpmux_string_free(out);
        if (found) {
            return 1;
        }
        sleep_ms(100);
    }
    return 0;
}

/* Calls a server-everything tool until its answer contains `want` (some tools appear only
 * once the server has seen the client's capabilities). */
static int everything_answers(mcpmux_pool pool, const char *tool, const char *args,
                              const char *want) {
    for (int i = 0; i < 100; i++) {
        char *out = NULL;
        mcpmux_status s = mcpmux_tools_call(pool, tool, args, NULL, 10000, &out);
        int found = s == MCPMUX_OK && out && strstr(out, want);
        if (i == 99) {
            fprintf(stderr, "  %s: %s %s\n", tool, mcpmux_status_name(s), out ? out : "");
        }
        mcpmux_string_free(out);
        if (found) {
            return 1;
        }
        sleep_ms(100);
    }
    return 0;
}

/* Copies the first "uri":"..." value of `json` into `buf`. */
static int first_uri(const char *json, char *buf, size_t n) {
    const char *p = json ? strstr(json, "\"uri\":\"") : NULL;
    if (!p) {
        return 0;
    }
    p += 7;
    const char *end = strchr(p, '"');
    if (!end || (size_t)(end - p) >= n) {
        return 0;
    }
    memcpy(buf, p, (size_t)(end - p));
    buf[end - p] = '\0';
    return 1;
}

void test_server_everything(void) {
    const char *js = everything_js();
    if (!js) {
        return;
    }
    mcpmux_pool pool = open_pool();
    char input[1024], *out = NULL;
    snprintf(input, sizeof input,
             "{\"name\": \"everything\", \"config\": {\"command\": \"node\", \"args\": [\"%s\", "
             "\"stdio\"]}}",
             js);
    CHECK_STATUS(mcpmux_roots_set(pool, "[{\"uri\": \"file:///tmp/mcpmux-c-first\"}]"),
                 MCPMUX_OK);
    static host_log sampling, elicitation;
    memset(&sampling, 0, sizeof sampling);
    memset(&elicitation, 0, sizeof elicitation);
    CHECK_STATUS(mcpmux_pool_set_sampling_handler(pool, NULL, on_sampling, &sampling, on_host_free),
                 MCPMUX_OK);
    CHECK_STATUS(
        mcpmux_pool_set_elicitation_handler(pool, on_elicitation, &elicitation, on_host_free),
        MCPMUX_OK);
    CHECK_STATUS(mcpmux_servers_add(pool, input, &out), MCPMUX_OK);
    mcpmux_string_free(out);

    CHECK_STATUS(mcpmux_tools_list(pool, "everything", NULL, 60000, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "\"name\":\"echo\"");
    CHECK_CONTAINS(out, "\"name\":\"get-sum\"");
    mcpmux_string_free(out);
    /* A prompt's second argument completes from the first (the context). */
    CHECK_STATUS(mcpmux_complete(pool, "everything",
                                 "{\"ref\": {\"type\": \"ref/prompt\", \"name\": \"completable-prompt\"}, "
                                 "\"argument\": {\"name\": \"name\", \"value\": \"\"}, "
                                 "\"context\": {\"arguments\": {\"department\": \"Sales\"}}}",
                                 20000, &out),
                 MCPMUX_OK);
    CHECK_CONTAINS(out, "\"values\":[\"David\",\"Eve\",\"Frank\"]");
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_complete(pool, "everything", "{\"ref\": {}}", 20000, &out),
                 MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(mcpmux_tools_call(pool, "mcp__everything__echo", "{\"message\": \"from C\"}", NULL, 0,
                                   &out),
                 MCPMUX_OK);
    CHECK_CONTAINS(out, "from C");
    mcpmux_string_free(out);
    CHECK_STATUS(mcpmux_tools_call(pool, "mcp__everything__get-sum", "{\"a\": 20, \"b\": 22}", NULL, 0,
                                   &out),
                 MCPMUX_OK);
    CHECK_CONTAINS(out, "42");
    mcpmux_string_free(out);

    CHECK_STATUS(mcpmux_resources_list(pool, "everything", NULL, 30000, &out), MCPMUX_OK);
    char uri[256] = "";
    CHECK(first_uri(out, uri, sizeof uri));
    mcpmux_string_free(out);
    if (uri[0]) {
        CHECK_STATUS(mcpmux_resources_read(pool, "everything", uri, 30000, &out), MCPMUX_OK);
        CHECK_CONTAINS(out, "\"contents\"");
        mcpmux_string_free(out);
        CHECK_STATUS(mcpmux_resources_subscribe(pool, "everything", uri, 30000), MCPMUX_OK);
        CHECK_STATUS(mcpmux_resources_unsubscribe(pool, "everything", uri, 30000), MCPMUX_OK);
        waiter w;
        waiter_init(&w);
        AWAIT(&w, mcpmux_resources_unsubscribe_async(pool, "everything", uri, 30000, on_complete,
                                                     &w, NULL));
        CHECK_STATUS(w.status, MCPMUX_OK);
        waiter_destroy(&w);
    }
    CHECK_STATUS(mcpmux_prompts_list(pool, "everything", NULL, 30000, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "\"serverName\":\"everything\"");
    mcpmux_string_free(out);

    /* Roots: the server asks the client (roots/list) and sees the pool's, then its own. */
    CHECK(everything_sees_root(pool, "file:///tmp/mcpmux-c-first"));
    CHECK_STATUS(mcpmux_roots_set_for_server(pool, "everything",
                                             "[{\"uri\": \"file:///tmp/mcpmux-c-second\"}]"),
                 MCPMUX_OK);
    CHECK(everything_sees_root(pool, "file:///tmp/mcpmux-c-second"));

    /* Sampling answered from inside the handler, elicitation from another thread. */
    CHECK(everything_answers(pool, "mcp__everything__trigger-sampling-request",
                             "{\"prompt\": \"what is mcpmux?\", \"maxTokens\": 10}",
                             "sampled by C"));
    CHECK(atomic_load(&sampling.calls) == 1);
    CHECK_CONTAINS(sampling.request, "\"serverName\":\"everything\"");
    CHECK_CONTAINS(sampling.request, "what is mcpmux?");
    CHECK_STATUS(sampling.bad_json, MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(sampling.good, MCPMUX_OK);
    CHECK_STATUS(sampling.again, MCPMUX_ERR_NOT_FOUND);
    CHECK(everything_answers(pool, "mcp__everything__trigger-elicitation-request", "{}",
                             "Ada Lovelace"));
    CHECK(atomic_load(&elicitation.calls) >= 1);
    CHECK(atomic_load(&sampling.freed) == 0);
    CHECK_STATUS(mcpmux_pool_close(pool, -1), MCPMUX_OK);
    CHECK(atomic_load(&sampling.freed) == 1 && atomic_load(&elicitation.freed) == 1);
}
