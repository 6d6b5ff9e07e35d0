/*
 * test_launch_cli.c - `memwall fit --launch FILE` (cli/cli_launch.c) run as a process (argv[1] is
 * the binary, argv[2] tests/launch): it names what it detected on stderr, and its --json output
 * is byte for byte the reply api_dispatch() gives to the body it sends (the configuration as its
 * member, the flags as strings) — the HTTP body.
 */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api.h"
#include "check_main.h"
#include "cli_launch.h"

static const char *memwall, *dir;

/* Run memwall with args; stdout into *out, stderr into *err (buffers owned here, reused by the
 * next call: a test reads them before it runs again); the exit status. */
static int run(const char *args, char **out, char **err)
{
    static char *obuf, *ebuf;
    char cmd[2048], errpath[] = "/tmp/memwall-launch-XXXXXX";
    FILE *p, *e;
    size_t n = 0, cap = 1 << 20;
    int fd = mkstemp(errpath), status;

    ck_assert_int_ge(fd, 0);
    snprintf(cmd, sizeof cmd, "%s %s 2>%s", memwall, args, errpath);
    p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    if (obuf == NULL)
        obuf = malloc(cap);
    if (ebuf == NULL)
        ebuf = malloc(4096);
    ck_assert(obuf != NULL && ebuf != NULL);
    *out = obuf;
    n = fread(*out, 1, cap - 1, p);
    (*out)[n] = '\0';
    status = pclose(p);
    e = fdopen(fd, "r");
    *err = ebuf;
    n = fread(*err, 1, 4095, e);
    (*err)[n] = '\0';
    fclose(e);
    remove(errpath);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The reply body api_dispatch() gives POST /fit with body (stolen), and a newline (what --json
 * prints); the text is owned here and replaced by the next call. */
static char *http_body(json_t *body)
{
    static char *last;
    struct api_request req;
    struct api_response resp;
    char *text = json_dumps(body, JSON_COMPACT), *out;

    memset(&req, 0, sizeof req);
    req.method = "POST";
    req.path = "/fit";
    req.body = text;
    req.body_len = strlen(text);
    req.content_type = "application/json";
    memset(&resp, 0, sizeof resp);
    ck_assert(api_dispatch(&req, &resp));
    free(last);
    out = last = malloc(resp.body_len + 2);
    ck_assert_ptr_nonnull(out);
    memcpy(out, resp.body, resp.body_len);
    out[resp.body_len] = '\n';
    out[resp.body_len + 1] = '\0';
    api_response_free(&resp);
    free(text);
    json_decref(body);
    return out;
}

static char *file_text(const char *name)
{
    char path[512];
    FILE *f;
    char *buf = malloc(1 << 20);
    size_t n;

    snprintf(path, sizeof path, "%s/%s", dir, name);
    f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    n = fread(buf, 1, (1 << 20) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static json_t *inputs_of(const char *out)
{
    json_t *j = json_loads(out, 0, NULL);

    ck_assert_msg(j != NULL, "not JSON: %.300s", out);
    return j;
}

/* The 175B script: torchrun's 8 x 1 GPUs cannot hold tp 8 x pp 16, so --gpus 128 overrides. */
START_TEST(torchrun_script)
{
    char args[1024], *out, *err, *text = file_text("megatron_train_gpt3_175b_distributed.sh");
    int line = 0;
    char *cmd = cli_launch_script_command(text, &line);
    json_t *r, *in;

    ck_assert_ptr_nonnull(cmd);
    ck_assert_int_eq(line, 77);
    snprintf(args, sizeof args,
             "fit --launch %s/megatron_train_gpt3_175b_distributed.sh --gpus 128 --json", dir);
    ck_assert_int_le(run(args, &out, &err), 1);
    ck_assert_msg(strstr(err, "a shell script; the Megatron-LM command on line 77") != NULL, "%s",
                  err);
    ck_assert_str_eq(out, http_body(json_pack("{s:s,s:s}", "megatron_args", cmd, "gpus", "128")));
    r = inputs_of(out);
    in = json_object_get(r, "inputs");
    ck_assert_int_eq(json_integer_value(json_object_get(in, "gpus")), 128);
    ck_assert_int_eq(json_integer_value(json_object_get(in, "tp")), 8);
    ck_assert_int_eq(json_integer_value(json_object_get(in, "pp")), 16);
    ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(in, "shape"), "vocab")),
                     51200);
    ck_assert_str_eq(json_string_value(json_object_get(in, "precision")), "fp16");
    json_decref(r);
    /* Without the override the script's own 8 GPUs cannot hold the layout: a 422. */
    snprintf(args, sizeof args, "fit --launch %s/megatron_train_gpt3_175b_distributed.sh --json",
             dir);
    ck_assert_int_eq(run(args, &out, &err), 2);
    ck_assert_msg(strstr(err, "exceeds gpus = 8") != NULL, "%s", err);
    free(text);
    free(cmd);
}
END_TEST

/* The manifest: bash -c's script, TP=4 expanded, the pipe cut off, 8 x 2 GPUs. */
START_TEST(kubernetes_manifest)
{
    char args[1024], *out, *err;
    json_t *r, *in;

    snprintf(args, sizeof args, "fit --launch %s/k8s_megatron_job.yaml --json", dir);
    ck_assert_int_le(run(args, &out, &err), 1);
    ck_assert_msg(strstr(err, "a Kubernetes manifest; the Megatron-LM command on line 3") != NULL,
                  "%s", err);
    r = inputs_of(out);
    in = json_object_get(r, "inputs");
    ck_assert_int_eq(json_integer_value(json_object_get(in, "gpus")), 16);
    ck_assert_int_eq(json_integer_value(json_object_get(in, "tp")), 4);
    ck_assert(json_is_true(json_object_get(in, "sequence_parallel")));
    ck_assert_str_eq(json_string_value(json_object_get(in, "checkpointing")), "selective");
    ck_assert_int_eq(json_integer_value(json_object_get(in, "zero_stage")), 1);
    json_decref(r);
}
END_TEST

/* A .toml and a ds_config .json are sent whole; --gpus fills the world. */
START_TEST(toml_and_json)
{
    char args[1024], *out, *err, *toml = file_text("torchtitan_llama3_8b.toml");
    char *ds = file_text("deepspeed_zero_stage_3_config.json");

    snprintf(args, sizeof args, "fit --launch %s/torchtitan_llama3_8b.toml --gpus 64 --json", dir);
    ck_assert_int_le(run(args, &out, &err), 1);
    ck_assert_msg(strstr(err, "a torchtitan TOML job") != NULL, "%s", err);
    ck_assert_str_eq(out,
                     http_body(json_pack("{s:s,s:s}", "torchtitan_config", toml, "gpus", "64")));
    snprintf(args, sizeof args,
             "fit --launch %s/deepspeed_zero_stage_3_config.json --gpus 8 --model gpt3-6.7b --json",
             dir);
    ck_assert_int_le(run(args, &out, &err), 1);
    ck_assert_msg(strstr(err, "a DeepSpeed ds_config") != NULL, "%s", err);
    ck_assert_str_eq(
        out, http_body(json_pack("{s:o,s:s,s:s}", "deepspeed_config", json_loads(ds, 0, NULL),
                                 "gpus", "8", "model", "gpt3-6.7b")));
    free(toml);
    free(ds);
}
END_TEST

/* The shell subset: ${X:-default}, NAME+=( ), $1 kept as written, export, a comment holding
 * parentheses inside an array, a continuation, a pipe and a redirection cut off. */
START_TEST(shell_subset)
{
    static const char script[] = "#!/bin/bash\n"
                                 "export TP=${TP_SIZE:-4}\n"
                                 "ARGS=(\n"
                                 "  --num-layers 8 # a comment (with parentheses)\n"
                                 "  --tensor-model-parallel-size $TP\n"
                                 ")\n"
                                 "ARGS+=(--save \"$1\" \"--split 99,1,0\")\n"
                                 "if [ -f x ]; then echo pretrain_gpt.py; fi\n"
                                 "python pretrain_gpt.py ${ARGS[@]} \\\n"
                                 "   --hidden-size 512 2>&1 | tee log\n";
    int line = 0;
    char *cmd = cli_launch_script_command(script, &line);

    ck_assert_ptr_nonnull(cmd);
    ck_assert_int_eq(line, 9);
    ck_assert_str_eq(cmd, "'python' 'pretrain_gpt.py' '--num-layers' '8' "
                          "'--tensor-model-parallel-size' '4' '--save' '$1' '--split' "
                          "'99,1,0' '--hidden-size' '512'");
    free(cmd);
    ck_assert_ptr_null(cli_launch_script_command("echo hello\nls -l\n", &line));
}
END_TEST

/* vLLM's docs command as a script, and vLLM's Kubernetes Deployment (sh -c, a flow list over
 * three lines): sent as vllm_args to /inference. Mistral-7B-Instruct-v0.3 has no preset (its
 * vocabulary is 32768): a 400 asking for config, until the body names a model. */
START_TEST(serving_commands)
{
    char args[1024], *out, *err;
    json_t *r, *in;

    snprintf(args, sizeof args,
             "inference --launch %s/vllm_serve_openai_compatible_server.sh --json", dir);
    ck_assert_int_le(run(args, &out, &err), 1);
    ck_assert_msg(strstr(err, "the serving (vLLM, SGLang or TensorRT-LLM) command on line 1, "
                              "sent as vllm_args") != NULL,
                  "%s", err);
    r = inputs_of(out);
    in = json_object_get(r, "inputs");
    ck_assert_str_eq(json_string_value(json_object_get(in, "model")), "llama3-8b");
    ck_assert_str_eq(json_string_value(json_object_get(in, "source")), "vllm_args");
    json_decref(r);
    snprintf(args, sizeof args, "inference --launch %s/vllm_k8s_mistral_7b_deployment.yaml --json",
             dir);
    ck_assert_int_eq(run(args, &out, &err), 2);
    ck_assert_msg(strstr(err, "vllm_args.serve MODEL") != NULL && strstr(err, "config") != NULL,
                  "%s", err);
    snprintf(args, sizeof args,
             "inference --launch %s/vllm_k8s_mistral_7b_deployment.yaml --model mistral-7b --json",
             dir);
    ck_assert_int_le(run(args, &out, &err), 1);
    r = inputs_of(out);
    in = json_object_get(r, "inputs");
    ck_assert_int_eq(json_integer_value(json_object_get(in, "max_num_batched_tokens")), 1024);
    json_decref(r);
}
END_TEST

/* The exec form most Deployments use: command: [vllm, serve, MODEL] and args: [...] as lists,
 * no shell (Kubernetes' own example for vLLM writes it so). The words were joined quoted
 * ('vllm' 'serve' ...) and the serving-command check looked for "vllm serve " in that text, so
 * such a manifest was "without a serving command". Llama 3.1 70B in FP8 over tp 4: the inputs
 * say tp 4, fp8 and max_model_len 32768, as the args set them. */
START_TEST(kubernetes_exec_form)
{
    static const char manifest[] =
        "apiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n"
        "        - name: vllm\n          image: vllm/vllm-openai\n"
        "          command: [\"vllm\", \"serve\", \"meta-llama/Llama-3.1-70B-Instruct\"]\n"
        "          args:\n            - --tensor-parallel-size\n            - \"4\"\n"
        "            - --quantization\n            - fp8\n            - --max-model-len\n"
        "            - \"32768\"\n";
    char path[] = "/tmp/memwall-k8s-XXXXXX", args[600], *out, *err, yaml[64];
    int fd = mkstemp(path);
    json_t *r, *in;

    ck_assert_int_ge(fd, 0);
    ck_assert(write(fd, manifest, sizeof manifest - 1) == (ssize_t)(sizeof manifest - 1));
    close(fd);
    snprintf(yaml, sizeof yaml, "%s.yaml", path);
    ck_assert_int_eq(rename(path, yaml), 0);
    snprintf(args, sizeof args, "inference --launch %s --json", yaml);
    ck_assert_int_le(run(args, &out, &err), 1);
    ck_assert_msg(strstr(err, "a Kubernetes manifest; a serving") != NULL, "%s", err);
    r = inputs_of(out);
    in = json_object_get(r, "inputs");
    ck_assert_int_eq(json_integer_value(json_object_get(in, "tp")), 4);
    ck_assert_str_eq(json_string_value(json_object_get(in, "quantization")), "fp8");
    ck_assert_int_eq(json_integer_value(json_object_get(in, "max_model_len")), 32768);
    json_decref(r);
    remove(yaml);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("launch_cli");
    TCase *t = tcase_create("launch_cli");

    tcase_set_timeout(t, 30);
    tcase_add_test(t, torchrun_script);
    tcase_add_test(t, kubernetes_manifest);
    tcase_add_test(t, kubernetes_exec_form);
    tcase_add_test(t, toml_and_json);
    tcase_add_test(t, shell_subset);
    tcase_add_test(t, serving_commands);
    suite_add_tcase(s, t);
    return s;
}

int main(int argc, char **argv)
{
    memwall = argc > 1 ? argv[1] : "memwall";
    dir = argc > 2 ? argv[2] : "tests/launch";
    return check_main_run(suite());
}
