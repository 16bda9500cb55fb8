/*
 * An mcpmux agent from C, with the model implemented in C too: a host tool (c_time), a
 * "provider" that first asks for a tool call and then answers, an approval callback and
 * streamed text. A real host would forward the request JSON to its own model instead.
 *
 *   agent CONFIG.json NAME COMMAND TOOL_ID ARGUMENTS_JSON
 *
 * The provider asks for TOOL_ID(ARGUMENTS_JSON) of server NAME (started as COMMAND) and
 * for c_time, then answers; the program prints the streamed text and the run's result.
 *
 * Build:  cc -std=c11 agent.c $(pkg-config --cflags --libs mcpmux) -o agent
 */
#include <mcpmux.h>

#include <stdio.h>
#include <string.h>

static const char *tool_id, *tool_args;

static int fail(const char *what, mcpmux_status status) {
    char message[512];
    mcpmux_last_error_message(message, sizeof message, NULL);
    fprintf(stderr, "%s failed: %s: %s\n", what, mcpmux_status_name(status), message);
    return 1;
}

/* A host tool: answers at once (it could also answer later, from any thread). */
static void c_time(void *user_data, mcpmux_host_request_id request, const char *arguments,
                   size_t len) {
    (void)user_data, (void)arguments, (void)len;
    mcpmux_host_request_respond(request, "{\"time\": \"12:00\"}");
}

/* The model: the first request asks for the tools, the next one (which carries their
 * results) gets the final answer, streamed first. */
static void chat(void *user_data, mcpmux_host_request_id request, const char *request_json,
                 size_t len) {
    (void)user_data, (void)len;
    if (!strstr(request_json, "\"tool_result\"")) {
        char response[2048];
        snprintf(response, sizeof response,
                 "{\"content\": [{\"type\": \"tool_use\", \"id\": \"1\", \"name\": \"%s\","
                 " \"input\": %s}, {\"type\": \"tool_use\", \"id\": \"2\", \"name\": \"c_time\","
                 " \"input\": {}}], \"stopReason\": \"tool_use\"}",
                 tool_id, tool_args);
        mcpmux_host_request_respond(request, response);
        return;
    }
    mcpmux_host_request_token(request, "Both tools ");
    mcpmux_host_request_token(request, "answered.");
    mcpmux_host_request_respond(
        request, "{\"content\": [{\"type\": \"text\", \"text\": \"Both tools answered.\"}]}");
}

/* Asked before a tool of an untrusted server runs. */
static void approve(void *user_data, mcpmux_host_request_id request, const char *json,
                    size_t len) {
    (void)user_data, (void)len;
    fprintf(stderr, "approving %s\n", json);
    mcpmux_host_request_respond(request, "\"once\"");
}

static void on_token(void *user_data, const char *text, size_t len) {
    (void)user_data;
    printf("token: %.*s\n", (int)len, text);
}

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: %s CONFIG.json NAME COMMAND TOOL_ID ARGUMENTS_JSON\n", argv[0]);
        return 2;
    }
    tool_id = argv[4];
    tool_args = argv[5];
    char options[1024], input[1024];
    snprintf(options, sizeof options, "{\"configPath\": \"%s\"}", argv[1]);
    mcpmux_pool pool;
    mcpmux_status s = mcpmux_pool_open(options, &pool);
    if (s != MCPMUX_OK) {
        return fail("mcpmux_pool_open", s);
    }
    int rc = 0;
    char *json = NULL;
    mcpmux_provider provider = 0;
    mcpmux_agent agent = 0;
    snprintf(input, sizeof input, "{\"name\": \"%s\", \"config\": {\"command\": \"%s\"}}",
             argv[2], argv[3]);
    s = mcpmux_servers_add(pool, input, &json);
    if (s != MCPMUX_OK && s != MCPMUX_ERR_INVALID_ARGUMENT) { /* may exist already */
        rc = fail("mcpmux_servers_add", s);
        goto out;
    }
    mcpmux_string_free(json);
    /* Listing the server's tools tells the agent whose tools they are (for approval). */
    s = mcpmux_tools_list(pool, argv[2], NULL, 30000, &json);
    if (s != MCPMUX_OK) {
        rc = fail("mcpmux_tools_list", s);
        goto out;
    }
    mcpmux_string_free(json);
    s = mcpmux_tools_register(pool, "c_time", "The time of day",
                              "{\"type\": \"object\", \"properties\": {}}", c_time, NULL, NULL,
                              NULL, NULL);
    if (s != MCPMUX_OK) {
        rc = fail("mcpmux_tools_register", s);
        goto out;
    }
    s = mcpmux_provider_new_host("c-model", "scripted", chat, NULL, NULL, NULL, &provider);
    if (s != MCPMUX_OK) {
        rc = fail("mcpmux_provider_new_host", s);
        goto out;
    }
    s = mcpmux_agent_new(pool, provider, "{\"maxIterations\": 4}", &agent);
    if (s != MCPMUX_OK) {
        rc = fail("mcpmux_agent_new", s);
        goto out;
    }
    /* The blocking run; mcpmux_agent_run() is the asynchronous one (cancellable). */
    s = mcpmux_agent_run_wait(agent, "Use the tools.", NULL, on_token, approve, NULL, 60000,
                              &json);
    if (s != MCPMUX_OK) {
        rc = fail("mcpmux_agent_run_wait", s);
        goto out;
    }
    printf("result: %s\n", json);
    mcpmux_string_free(json);
out:
    mcpmux_agent_free(agent);
    mcpmux_provider_free(provider);
    mcpmux_pool_close(pool, -1);
    return rc;
}
