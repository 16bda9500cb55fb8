/* A sandboxed stdio server through the C API: the record's `sandbox` keeps the tests' hostile
 * probe server from the user's key while the same server without one reads it. */
#include "harness.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static void write_file(const char *dir, const char *name, const char *text) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    fputs(text, f);
    fclose(f);
}

/* `mcpmux-probe-server`, built beside the test server. */
static void probe_server(char *path, size_t size) {
    snprintf(path, size, "%s", test_server());
    char *slash = strrchr(path, '/');
    CHECK(slash != NULL);
    snprintf(slash + 1, size - (size_t)(slash + 1 - path), "mcpmux-probe-server");
}

static char *probe(mcpmux_pool pool, const char *server, const char *key, const char *value) {
    char tool[64], arguments[600];
    snprintf(tool, sizeof tool, "mcp__%s__probe", server);
    snprintf(arguments, sizeof arguments, "{\"%s\": \"%s\"}", key, value);
    char *out = NULL;
    CHECK_STATUS(mcpmux_tools_call(pool, tool, arguments, NULL, 0, &out), MCPMUX_OK);
    return out;
}

/* The sandboxed server reads what it is granted, and not the user's key. */
static void check_kept(mcpmux_pool pool, const char *key, const char *notes) {
    char *out = probe(pool, "jailed", "read", key);
    CHECK_CONTAINS(out, "\"isError\":true");
    CHECK_CONTAINS(out, "Permission denied");
    mcpmux_string_free(out);
    out = probe(pool, "jailed", "read", notes);
    CHECK_CONTAINS(out, "ok: read 7 bytes");
    mcpmux_string_free(out);
}

/* Where the kernel's Landlock cannot be reached (under valgrind, which knows none of its
 * system calls), a required sandbox fails closed: the server does not start, saying why. */
static void check_fails_closed(mcpmux_pool pool) {
    char *out = NULL;
    CHECK_STATUS(mcpmux_servers_connect(pool, "jailed", 10000, &out), MCPMUX_ERR_CONNECTION);
    char *refused = mcpmux_last_error();
    CHECK_CONTAINS(refused, "no Landlock");
    CHECK_CONTAINS(refused, "`required`");
    mcpmux_string_free(refused);
}

void test_sandbox(void) {
    char home[] = "/tmp/mcpmux-c-sandbox-XXXXXX";
    CHECK(mkdtemp(home) != NULL);
    char project[128], key[128], notes[160], probe_path[512], input[2048];
    snprintf(project, sizeof project, "%s/project", home);
    CHECK(mkdir(project, 0700) == 0);
    write_file(home, "id_rsa", "-----BEGIN FAKE KEY-----");
    write_file(project, "notes.md", "# notes");
    snprintf(key, sizeof key, "%s/id_rsa", home);
    snprintf(notes, sizeof notes, "%s/notes.md", project);
    probe_server(probe_path, sizeof probe_path);

    mcpmux_pool pool = open_pool();
    char *out = NULL;
    snprintf(input, sizeof input,
             "{\"name\": \"jailed\", \"config\": {\"command\": \"%s\", \"sandbox\": "
             "{\"read\": [\"%s\"], \"required\": true}}}",
             probe_path, project);
    CHECK_STATUS(mcpmux_servers_add(pool, input, &out), MCPMUX_OK);
    CHECK_CONTAINS(out, "\"sandbox\":{\"read\":[");
    mcpmux_string_free(out);
    snprintf(input, sizeof input, "{\"name\": \"free\", \"config\": {\"command\": \"%s\"}}",
             probe_path);
    CHECK_STATUS(mcpmux_servers_add(pool, input, &out), MCPMUX_OK);
    mcpmux_string_free(out);

    out = probe(pool, "free", "read", key);
    CHECK_CONTAINS(out, "ok: read 24 bytes");
    mcpmux_string_free(out);
    if (getenv("MCPMUX_C_TEST_NO_LANDLOCK")) {
        check_fails_closed(pool);
    } else {
        check_kept(pool, key, notes);
    }

    /* Only a stdio server runs here to be sandboxed: a remote one is refused, saying so. */
    const char *remote =
        "{\"name\": \"remote\", \"config\": {\"url\": \"http://127.0.0.1:9/mcp\", \"sandbox\": {}}}";
    CHECK_STATUS(mcpmux_servers_add(pool, remote, &out), MCPMUX_ERR_INVALID_ARGUMENT);
    char *why = mcpmux_last_error();
    CHECK_CONTAINS(why, "only a stdio server");
    mcpmux_string_free(why);
    CHECK_STATUS(mcpmux_pool_close(pool, 0), MCPMUX_OK);

    unlink(notes);
    unlink(key);
    rmdir(project);
    rmdir(home);
}
