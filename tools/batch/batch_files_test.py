"""The batch-system files in tools/batch/: checked for syntax and for the fields their systems
require, then run here as their systems would run them (each index of the Kubernetes Indexed
Job's container script with JOB_COMPLETION_INDEX set, each task of the Slurm array with
SLURM_ARRAY_TASK_ID set, then their merge), and the merged report compared with one process.

Run by the 'sweep' suite through tools/dask/with_venv.sh (PyYAML comes with the venv).
"""

import json
import os
import subprocess
import tempfile
import unittest

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BIN = os.path.abspath(
    os.environ.get("RESTORESIM_BIN", os.path.join(ROOT, "build/tools/restoresim")))
JOB = os.path.join(HERE, "k8s-indexed-job.yaml")
SLURM = os.path.join(HERE, "slurm-sweep.sh")
EXPLORE = "--scenario demo.* --seeds 30 --repros-max 2 --jobs 1"
SHARDS = 3


def env_with_restoresim(**extra):
    """`restoresim` on PATH, as in the image / on the nodes."""
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(BIN) + os.pathsep + env["PATH"]
    env.pop("SLURM_ARRAY_TASK_ID", None)
    env.update(extra)
    return env


def without_timing(text):
    report = json.loads(text)
    report.pop("timing")
    return report


class BatchFilesTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="restoresim-batch-test-")
        proc = subprocess.run([BIN, "explore", *EXPLORE.split(), "--json", "--repro-dir",
                               os.path.join(self.tmp.name, "single-repros")],
                              capture_output=True, text=True, check=False)
        self.assertIn(proc.returncode, (0, 1), proc.stderr)
        self.single = without_timing(proc.stdout)

    def tearDown(self):
        self.tmp.cleanup()

    def merged_equals_single(self, results):
        reports = [os.path.join(results, f"shard-{i}", "shard.json") for i in range(SHARDS)]
        proc = subprocess.run([BIN, "merge", *reports, "--json"], capture_output=True,
                              text=True, check=False)
        self.assertIn(proc.returncode, (0, 1), proc.stderr)
        merged = without_timing(proc.stdout)
        for f in merged["failures"] + self.single["failures"]:  # paths differ: compare names
            if "repro" in f:
                self.assertTrue(os.path.exists(f["repro"]), f["repro"])
                f["repro"] = os.path.basename(f["repro"])
        self.assertEqual(merged, self.single)

    def test_kubernetes_indexed_job(self):
        with open(JOB, encoding="utf-8") as f:
            job = yaml.safe_load(f)
        self.assertEqual(job["apiVersion"], "batch/v1")
        self.assertEqual(job["kind"], "Job")
        self.assertTrue(job["metadata"]["name"])
        spec = job["spec"]
        self.assertEqual(spec["completionMode"], "Indexed")
        pod = spec["template"]["spec"]
        self.assertIn(pod["restartPolicy"], ("Never", "OnFailure"))
        (container,) = pod["containers"]
        self.assertTrue(container["name"] and container["image"])
        env = {e["name"]: e["value"] for e in container["env"]}
        self.assertEqual(int(env["SHARDS"]), spec["completions"])
        mounts = {m["name"] for m in container["volumeMounts"]}
        self.assertEqual(mounts, {v["name"] for v in pod["volumes"]})
        for rule in spec["podFailurePolicy"]["rules"]:
            self.assertEqual(rule["onExitCodes"]["containerName"], container["name"])
        script = container["args"][0]
        self.assertIn("$JOB_COMPLETION_INDEX/$SHARDS", script)
        subprocess.run(container["command"][:1] + ["-n", "-c", script], check=True)
        # Each index as the Job runs it, with a small sweep and a local folder as the volume.
        results = os.path.join(self.tmp.name, "results")
        for i in range(SHARDS):
            env = env_with_restoresim(JOB_COMPLETION_INDEX=str(i), SHARDS=str(SHARDS),
                                      RESULTS=results, EXPLORE_ARGS=EXPLORE)
            subprocess.run(container["command"] + [script], check=True,
                           stdout=subprocess.DEVNULL, env=env)
        self.merged_equals_single(results)

    def test_slurm_job_array(self):
        subprocess.run(["bash", "-n", SLURM], check=True)
        with open(SLURM, encoding="utf-8") as f:
            text = f.read()
        self.assertIn("#SBATCH --job-name=", text)
        self.assertIn('--shard "$SLURM_ARRAY_TASK_ID/$SHARDS"', text)
        results = os.path.join(self.tmp.name, "results")
        for i in range(SHARDS):
            env = env_with_restoresim(SLURM_ARRAY_TASK_ID=str(i), SHARDS=str(SHARDS),
                                      RESULTS=results, EXPLORE_ARGS=EXPLORE)
            subprocess.run([SLURM, "shard"], check=True, stdout=subprocess.DEVNULL, env=env)
        proc = subprocess.run([SLURM, "merge"], capture_output=True, text=True, check=False,
                              env=env_with_restoresim(SHARDS=str(SHARDS), RESULTS=results))
        self.assertIn(proc.returncode, (0, 1), proc.stderr)
        self.assertIn("restoresim merge: 3 shards", proc.stdout)
        self.assertTrue(os.path.exists(os.path.join(results, "merged.json")))
        self.merged_equals_single(results)
        # A task outside an array is refused with a message, not run as shard 0.
        proc = subprocess.run([SLURM, "shard"], capture_output=True, text=True, check=False,
                              env=env_with_restoresim(SHARDS="3"))
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("job array", proc.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
