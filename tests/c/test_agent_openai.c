/* The agent against a model service over HTTP (mcpmux-fake-llm, the wire format of
 * OpenAI's Chat Completions): a new user's first run, and the approval policy. */
#include "harness.h"

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* The scripted model service (mcpmux-fake-llm, the wire format of OpenAI's Chat
 * Completions) in a child process; it stops when its stdin closes. */
typedef struct {
    pid_t pid;
    int stdin_fd;
    char base_url[256];
} fake_llm;

/* Starts it with `turns` (its JSON script); 0 when it could not start. */
static int fake_llm_start(fake_llm *f, const char *turns) {
    const char *bin = getenv("MCPMUX_FAKE_LLM");
    if (!bin || access(bin, X_OK) != 0) {
        fprintf(stderr, "  MCPMUX_FAKE_LLM must name the mcpmux-fake-llm binary\n");
        return 0;
    }
    int in[2], out[2];
    if (pipe(in) != 0) {
        return 0;
    }
    if (pipe(out) != 0) {
        close(in[0]);
        close(in[1]);
        return 0;
    }
    pid_t pid = fork();
    if (pid == 0) {
        /* Only async-signal-safe calls between fork and exec: the library has threads. */
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[0]);
        close(in[1]);
        close(out[0]);
        close(out[1]);
        execl(bin, bin, turns, (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    f->pid = pid;
    f->stdin_fd = in[1];
    f->base_url[0] = 0;
    FILE *r = fdopen(out[0], "r");
    int ok = r && fgets(f->base_url, sizeof f->base_url, r) != NULL;
    if (r) {
        fclose(r);
    } else {
        close(out[0]);
    }
    f->base_url[strcspn(f->base_url, "\r\n")] = 0;
    return ok && pid > 0 && strncmp(f->base_url, "http://127.0.0.1:", 17) == 0;
}

static void fake_llm_stop(fake_llm *f) {
    close(f->stdin_fd);
    waitpid(f->pid, NULL, 0);
}

/* As a new user: an empty config, a real server added, and at once an agent run against
 * the model service over HTTP, with no listing call in between. The model searches, then
 * calls the tool its search found; a second, broken server is reported, not fatal. */
void test_agent_on_a_fresh_config(void) {
    const char *js = everything_js();
    if (!js) {
        return;
    }
    for (int with_broken = 0; with_broken < 2; with_broken++) {
        fake_llm f;
        CHECK(fake_llm_start(&f, "[{\"tools\": [[\"search_tools\", {\"query\": \"echo\"}]]},"
                                 " {\"callFound\": \"echo\", \"arguments\": {\"message\": \"hi from C\"}},"
                                 " {\"text\": \"It said hi.\"}]"));
        char path[320], opts[512], input[1024], provider_json[512], *out = NULL;
        config_path(path, sizeof path);
        /* The defaults a new user gets, adding connects included. */
        snprintf(opts, sizeof opts, "{\"configPath\": \"%s\", \"healthCheckIntervalMs\": 0}",
                 path);
        mcpmux_pool pool = 0;
        CHECK_STATUS(mcpmux_pool_open(opts, &pool), MCPMUX_OK);
        snprintf(input, sizeof input,
                 "{\"name\": \"everything\", \"isTrusted\": true, \"config\": {\"command\":"
                 " \"node\", \"args\": [\"%s\", \"stdio\"]}}",
                 js);
        CHECK_STATUS(mcpmux_servers_add(pool, input, &out), MCPMUX_OK);
        mcpmux_string_free(out);
        if (with_broken) {
            CHECK_STATUS(mcpmux_servers_add(pool,
                                            "{\"name\": \"broken\", \"config\": {\"command\":"
                                            " \"/nonexistent/server\"}}",
                                            &out),
                         MCPMUX_OK);
            mcpmux_string_free(out);
        }
        snprintf(provider_json, sizeof provider_json,
                 "{\"type\": \"openai\", \"model\": \"m\", \"baseUrl\": \"%s\"}", f.base_url);
        mcpmux_provider provider = 0;
        CHECK_STATUS(mcpmux_provider_create(provider_json, &provider), MCPMUX_OK);
        mcpmux_agent agent = 0;
        CHECK_STATUS(mcpmux_agent_new(pool, provider, NULL, &agent), MCPMUX_OK);
        CHECK_STATUS(mcpmux_agent_run_wait(agent, "Use the echo tool and say hi", NULL, NULL, NULL,
                                           NULL, 120000, &out),
                     MCPMUX_OK);
        CHECK_CONTAINS(out, "\"stop\":\"finished\"");
        CHECK_CONTAINS(out, "\"text\":\"It said hi.\"");
        CHECK_CONTAINS(out, "\"name\":\"mcp__everything__echo\"");
        CHECK_CONTAINS(out, "Echo: hi from C");
        if (with_broken) {
            /* (Under valgrind the spawn itself seems to work and the handshake fails.) */
            CHECK_CONTAINS(out, "\\\"unavailable\\\":[{\\\"error\\\":\\\"connection to server 'broken' failed");
        } else {
            CHECK(out && !strstr(out, "unavailable"));
        }
        mcpmux_string_free(out);
        CHECK_STATUS(mcpmux_agent_free(agent), MCPMUX_OK);
        CHECK_STATUS(mcpmux_provider_free(provider), MCPMUX_OK);
        CHECK_STATUS(mcpmux_pool_close(pool, 0), MCPMUX_OK);
        fake_llm_stop(&f);
    }
}

typedef struct {
    pthread_mutex_t mu;
    int count;
    char asked[2][1024];
} approvals_log;

static void on_policy_approve(void *user_data, mcpmux_host_request_id request, const char *json,
                              size_t len) {
    approvals_log *l = user_data;
    pthread_mutex_lock(&l->mu);
    if (l->count < 2) {
        snprintf(l->asked[l->count], sizeof l->asked[0], "%.*s", (int)len, json);
    }
    l->count++;
    pthread_mutex_unlock(&l->mu);
    mcpmux_host_request_respond(request, "\"once\"");
}

/* Under the read-only policy a trusted server's read-only tool runs unasked and its
 * destructive one is asked about, with the tool's annotations and why. */
void test_agent_approval_policy(void) {
    fake_llm f;
    CHECK(fake_llm_start(&f, "[{\"tools\": [[\"mcp__t__echo\", {\"text\": \"x\"}],"
                             " [\"mcp__t__end_streams\", {}]]}, {\"text\": \"done\"}]"));
    mcpmux_pool pool = open_pool();
    char input[512], provider_json[512], *out = NULL;
    snprintf(input, sizeof input,
             "{\"name\": \"t\", \"isTrusted\": true, \"config\": {\"command\": \"%s\"}}",
             test_server());
    CHECK_STATUS(mcpmux_servers_add(pool, input, &out), MCPMUX_OK);
    mcpmux_string_free(out);
    snprintf(provider_json, sizeof provider_json,
             "{\"type\": \"openai\", \"model\": \"m\", \"baseUrl\": \"%s\"}", f.base_url);
    mcpmux_provider provider = 0;
    CHECK_STATUS(mcpmux_provider_create(provider_json, &provider), MCPMUX_OK);
    mcpmux_agent agent = 0;
    CHECK_STATUS(mcpmux_agent_new(pool, provider, "{\"approvalPolicy\": \"read_only\"}", &agent),
                 MCPMUX_OK);
    static approvals_log l;
    memset(&l, 0, sizeof l);
    pthread_mutex_init(&l.mu, NULL);
    CHECK_STATUS(mcpmux_agent_run_wait(agent, "go", NULL, NULL, on_policy_approve, &l, 60000,
                                       &out),
                 MCPMUX_OK);
    CHECK_CONTAINS(out, "\"stop\":\"finished\"");
    mcpmux_string_free(out);
    pthread_mutex_lock(&l.mu);
    CHECK(l.count == 1);
    CHECK_CONTAINS(l.asked[0], "\"toolId\":\"mcp__t__end_streams\"");
    CHECK_CONTAINS(l.asked[0], "\"reason\":\"not_read_only\"");
    CHECK_CONTAINS(l.asked[0], "\"destructiveHint\":true");
    CHECK_CONTAINS(l.asked[0], "\"trusted\":true");
    pthread_mutex_unlock(&l.mu);
    mcpmux_agent bad = 0;
    CHECK_STATUS(mcpmux_agent_new(pool, provider, "{\"approvalPolicy\": \"sometimes\"}", &bad),
                 MCPMUX_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(mcpmux_agent_free(agent), MCPMUX_OK);
    CHECK_STATUS(mcpmux_provider_free(provider), MCPMUX_OK);
    CHECK_STATUS(mcpmux_pool_close(pool, 0), MCPMUX_OK);
    pthread_mutex_destroy(&l.mu);
    fake_llm_stop(&f);
}
