"""GPU analyzers (diag/diagnosis/analyzers/gpu.py): Xid events graded by whose fault they are, and CUDA OOM."""

from __future__ import annotations

from tests.diagnosis.logs import diagnose, found, ids, top

WATCHDOG = (
    "[rank0]:[E1202 11:14:33.189526546 ProcessGroupNCCL.cpp:689] [Rank 0] Watchdog caught collective operation "
    "timeout: WorkNCCL(SeqNum=2, OpType=ALLREDUCE, NumelIn=67108864, NumelOut=67108864, Timeout(ms)=20000) ran for "
    "20053 milliseconds before timing out."
)


# ----------------------------------------------------------------------------------------- gpu_xid
def test_gpu_off_the_bus_is_critical_on_its_node_and_explains_the_timeout(rules):
    xid = (
        "slinky-2: [Tue Mar 11 03:14:07 2025] NVRM: Xid (PCI:0000:3b:00): 79, pid=48213, name=python, GPU has fallen "
        "off the bus."
    )
    report = diagnose(rules, [xid, WATCHDOG])
    finding = found(report, "gpu-xid")
    assert (finding.severity, finding.hosts) == ("critical", ["slinky-2"])
    assert found(report, "nccl-timeout").explained_by == "gpu-xid"


def test_contained_ecc_error_is_an_error_not_critical(rules):
    xid = "slinky-1: [ 9123.4] NVRM: Xid (PCI:0000:9a:00): 94, pid=20412, name=python3, Contained: SM (0x1). RST: No"
    finding = found(diagnose(rules, [xid]), "gpu-xid")
    assert (finding.severity, finding.hosts) == ("error", ["slinky-1"])


def test_a_recorded_row_remapping_on_a_run_that_went_on_is_a_warning_and_an_error_when_it_failed(rules):
    # NVIDIA's Xid table: 63 records a row remapping and 92 a high single-bit ECC rate; the GPU keeps
    # working until its next reset. The training went on and saved its checkpoint.
    xid63 = (
        "slinky-1: [ 9123.4] NVRM: Xid (PCI:0000:9a:00): 63, pid=20412, name=python3, Row Remapper: New row "
        "(0x00000000016d0c40) marked for remapping, reset gpu to activate."
    )
    xid92 = "slinky-1: [ 9124.0] NVRM: Xid (PCI:0000:9a:00): 92, High single-bit ECC error rate"
    went_on = ["step 4000 loss 1.82", "saved checkpoint to /pfs/u/ckpt/step_4000"]
    for xid in (xid63, xid92):
        finding = found(diagnose(rules, [xid, *went_on]), "gpu-xid")
        assert finding.severity == "warning", (xid, finding.severity)
        failed = diagnose(rules, [xid, "srun: error: slinky-1: task 1: Exited with exit code 1"])
        assert found(failed, "gpu-xid").severity == "error"


def test_an_uncorrectable_nvlink_error_in_the_process_is_a_hardware_fault(rules):
    # cudaErrorNvlinkUncorrectable as PyTorch re-raises it; the driver's Xid 74 is in dmesg, not here.
    lines = [
        "[rank6]: RuntimeError: CUDA error: uncorrectable NVLink error was detected during the execution",
        WATCHDOG,
        "srun: error: slinky-0: task 6: Exited with exit code 1",
    ]
    report = diagnose(rules, lines)
    assert top(report, "gpu-xid").severity == "critical"
    assert found(report, "nccl-timeout").explained_by == "gpu-xid"


def test_a_fatal_nvswitch_sxid_is_a_hardware_fault_and_a_non_fatal_one_only_a_record(rules):
    # Fabric Manager user guide: a fatal SXid takes the node's NVLink fabric down until a reset;
    # non-fatal ones are recorded and the fabric goes on.
    fatal = "slinky-0: [ 8812.3] nvidia-nvswitch2: SXid (PCI:0000:c4:00.0): 20034, Fatal, Link 27 LTSSM Fault Up"
    report = diagnose(rules, [fatal, WATCHDOG, "srun: error: slinky-0: task 0: Exited with exit code 1"])
    finding = top(report, "gpu-xid")
    assert (finding.severity, finding.hosts) == ("critical", ["slinky-0"])
    assert found(report, "nccl-timeout").explained_by == "gpu-xid"
    recorded = "nvidia-nvswitch4: SXid (PCI:0000:c6:00.0): 19084, Non-fatal, Link 29 AN1 Heartbeat Timeout Error (First)"
    assert found(diagnose(rules, [recorded, "step 100 loss 2.1"]), "gpu-xid").severity == "info"


def test_vllm_refusing_a_context_its_kv_cache_cannot_hold_says_how_much_was_missing(rules):
    # vllm/v1/core/kv_cache_utils.py, from the engine core process of a multi-node serve.
    line = (
        "(EngineCore_DP0 pid=4412) ValueError: To serve at least one request with the models's max seq len "
        "(131072), (16.00 GiB KV cache is needed, which is larger than the available KV cache memory (4.21 GiB). "
        "Based on the available memory, the estimated maximum model length is 34480."
    )
    report = diagnose(rules, [line, "srun: error: slinky-0: task 0: Exited with exit code 1"])
    assert "16.00 GiB needed, 4.21 GiB available" in top(report, "cuda-oom").detail


def test_vllm_start_up_line_with_no_kv_cache_names_the_oom_even_when_the_error_is_cut_off(rules):
    # vllm/v1/worker/gpu_worker.py logs the profiled KV cache memory right before check_enough_kv_cache_memory
    # raises; V0's executor logs "# GPU blocks: 0" before raise_if_cache_size_invalid.
    v1 = [
        "(EngineCore_DP0 pid=563) INFO 12-23 23:34:23 [gpu_worker.py:298] Available KV cache memory: -2.77 GiB",
        "(EngineCore_DP0 pid=563) ERROR 12-23 23:34:23 [core.py:708] EngineCore failed to start.",
    ]
    finding = top(diagnose(rules, v1), "cuda-oom")
    assert "-2.77 GiB" in finding.detail and finding.assumed
    v0 = ["INFO 04-27 10:13:05 llm_engine.py:275] # GPU blocks: 0, # CPU blocks: 256"]
    top(diagnose(rules, v0), "cuda-oom")
    healthy = [
        "(EngineCore_DP0 pid=4412) INFO 10-01 04:29:41 [gpu_worker.py:298] Available KV cache memory: 61.23 GiB",
        "INFO 04-27 10:13:05 llm_engine.py:275] # GPU blocks: 2340, # CPU blocks: 512",
    ]
    assert "cuda-oom" not in ids(diagnose(rules, healthy))


def test_xla_out_of_memory_in_bytes_and_in_the_old_status_wording_is_cuda_oom(rules):
    for line in (
        "RESOURCE_EXHAUSTED: Out of memory while trying to allocate 285212672 bytes.",
        "2021-07-21 16:15:16.513776: E external/org_tensorflow/tensorflow/compiler/xla/pjrt/"
        "pjrt_stream_executor_client.cc:1981] Execution of replica 0 failed: Resource exhausted: Failed to allocate "
        "request for 32.00MiB (33554432B) on device ordinal 0",
        "  (0) Resource exhausted: Out of memory while trying to allocate 68852648264 bytes.",
    ):
        top(diagnose(rules, [line]), "cuda-oom")


def test_cudnn_autotuning_short_of_memory_is_not_an_oom(rules):
    # XLA's conv algorithm picker warns and goes on with a slower algorithm.
    lines = [
        "2021-10-12 20:59:07.627384: W tensorflow/compiler/xla/service/gpu/gpu_conv_algorithm_picker.cc:729] Failed "
        "to determine best cudnn convolution algorithm: Resource exhausted: Out of memory while trying to allocate "
        "16777716 bytes.",
        "Convolution performance may be suboptimal.",
    ]
    assert "cuda-oom" not in ids(diagnose(rules, lines))


def test_application_xid_is_only_a_warning_and_leaves_the_failure_unexplained(rules):
    lines = [
        "[rank4]: RuntimeError: CUDA error: an illegal memory access was encountered",
        "slinky-0: [ 812.1] NVRM: Xid (PCI:0000:9a:00): 13, pid=3301, name=python3, Graphics SM Warp Exception on "
        "(GPC 1, TPC 0, SM 0): Out Of Range Address",
        "slinky-0: [ 812.2] NVRM: Xid (PCI:0000:9a:00): 45, pid=3301, name=python3, Ch 00000010",
        "srun: error: slinky-0: task 0: Exited with exit code 1",
    ]
    report = diagnose(rules, lines)
    assert found(report, "gpu-xid").severity == "warning"
    assert report.findings[0].id == "unexplained-failure"


def test_nvml_driver_library_mismatch_is_an_error(rules):
    line = (
        "slinky-1:20412:20412 [0] misc/nvmlwrap.cc:183 NCCL WARN nvmlInit_v2() failed: Driver/library version mismatch"
    )
    assert found(diagnose(rules, [line]), "gpu-xid").severity == "error"


# ---------------------------------------------------------------------------------------- cuda_oom
def test_cuda_oom_names_the_rank(rules):
    line = (
        "[rank3]: torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total "
        "capacty of 79.15 GiB of which 1.23 GiB is free. Including non-PyTorch memory, this process has 77.91 GiB "
        "memory in use. Of the allocated memory 75.2 GiB is allocated by PyTorch, and 1.1 GiB is reserved by "
        "PyTorch but unallocated."
    )
    finding = found(diagnose(rules, [line]), "cuda-oom")
    assert (finding.severity, finding.ranks) == ("error", [3])


def test_nccl_buffer_allocation_failure_is_a_cuda_oom_on_its_node(rules):
    line = "slinky-0:20412:20412 [0] include/alloc.h:125 NCCL WARN Cuda failure 'out of memory'"
    assert found(diagnose(rules, [line]), "cuda-oom").hosts == ["slinky-0"]


def test_memory_report_mentioning_oom_in_prose_is_no_finding(rules):
    line = "max memory allocated: 71.2 GiB of 79.1 GiB (CUDA out of memory avoided with activation checkpointing)"
    assert "cuda-oom" not in ids(diagnose(rules, [line]))


def test_a_gpu_lost_without_any_xid_line_is_still_a_gpu_fault(rules):
    for line in (
        "NVRM: The NVIDIA GPU 0000:b7:00.0 (PCI ID: 10de:2330) installed in this system has fallen off the bus and "
        "is not responding to commands.",
        "Unable to determine the device handle for GPU0000:B7:00.0: Unknown Error",
        "pynvml.NVMLError_GpuIsLost: GPU is lost",
        "[  41.2] NVRM: GPU 0000:b7:00.0: RmInitAdapter failed! (0x23:0x65:1417)",
        "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: CUDA_ERROR_ECC_UNCORRECTABLE: uncorrectable ECC error "
        "encountered",
    ):
        report = diagnose(rules, [line, "srun: error: n5: task 3: Exited with exit code 1"])
        assert report.findings[0].id == "gpu-xid", (line, [f.id for f in report.findings])
        assert "[hardware]" in report.findings[0].detail


def test_a_kernel_that_died_without_an_xid_in_the_log_is_a_gpu_fault_that_says_what_it_assumed(rules):
    crash = "[rank3]: RuntimeError: CUDA error: unspecified launch failure"
    finding = found(diagnose(rules, [crash, "srun: error: n5: task 3: Exited with exit code 1"]), "gpu-xid")
    assert finding.assumed and finding.confidence < 0.5
    assert "gpu-xid" not in ids(diagnose(rules, ["kernel test: expecting 'CUDA error: unspecified launch failure'"]))


def test_cuda_s_unknown_error_in_a_job_that_died_of_it_is_a_gpu_fault_too(rules):
    crash = [
        "[default5]:terminate called after throwing an instance of 'c10::CUDAError'",
        "[default5]:  what():  CUDA error: unknown error",
    ]
    finding = found(diagnose(rules, crash), "gpu-xid")
    assert "unknown error" in finding.detail and finding.assumed


def test_gpu_memory_exhaustion_in_jax_tensorflow_cupy_and_vllm_words(rules):
    for line in (
        "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 7.1GiB.",
        "ResourceExhaustedError: OOM when allocating tensor with shape[4096,4096] and type float on GPU:0",
        "cupy.cuda.memory.OutOfMemoryError: cudaErrorMemoryAllocation: out of memory",
        "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization`.",
    ):
        report = diagnose(rules, [line, "srun: error: n2: task 1: Exited with exit code 1"])
        assert report.findings[0].id == "cuda-oom", (line, [f.id for f in report.findings])
    assert "cuda-oom" not in ids(diagnose(rules, ["host RAM: RESOURCE_EXHAUSTED quota on the API, retrying"]))


def test_a_gpu_the_driver_says_needs_a_reset_is_a_gpu_fault_not_a_second_task_on_it(rules):
    busy = "Test CUDA failure common.cu:1007 'CUDA-capable device(s) is/are busy or unavailable'"
    reset = (
        "[Sun Jan 11 09:52:01 2026] NVRM: nvAssertOkFailedNoLog: Assertion failed: Reset required "
        "[NV_ERR_RESET_REQUIRED] (0x00000062) returned from status @ kernel_channel.c:2874"
    )
    report = diagnose(rules, [busy, reset])
    assert "NV_ERR_RESET_REQUIRED" in top(report, "gpu-xid").detail
    assert "nccl-duplicate-gpu" not in ids(report)
    # Busy alone: most often a second task placed on the GPU, said with what it assumed.
    alone = top(diagnose(rules, [busy]), "nccl-duplicate-gpu")
    assert "exclusive-process" in alone.detail and alone.assumed


def test_a_cuda_error_code_the_runtime_cannot_name_points_at_the_gpu_when_the_job_failed(rules):
    finding = top(diagnose(rules, ["CUDA error: unrecognized error code"]), "gpu-xid")
    assert "dmesg" in finding.detail and finding.confidence < 0.5


def test_nccls_failed_device_allocation_is_gpu_memory(rules):
    line = "node017:81234:81350 [2] include/alloc.h:161 NCCL WARN Failed to CUDA malloc 4194304 bytes"
    top(diagnose(rules, [line]), "cuda-oom")


def test_dcgm_health_words_name_the_gpu_fault_but_a_cleared_recovery_action_is_none(rules):
    for line, says in (
        ("Detected XID 79 for GPU 5", "Xid 79"),
        ("GPU 6's NvLink link 11 is currently down", "NvLink link 11"),
        ("Detected fatal NvSwitch SXID 22010", "SXID 22010"),
    ):
        assert says in top(diagnose(rules, [line]), "gpu-xid").detail
    cleared = "NVRM: Xid (PCI:0000:9d:00): 154, GPU recovery action changed from 0x1 (GPU Reset Required) to 0x0 (None)"
    assert "gpu-xid" not in ids(diagnose(rules, [cleared]))
    needed = "NVRM: Xid (PCI:0000:9d:00): 154, GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)"
    assert top(diagnose(rules, [needed]), "gpu-xid").severity == "critical"


def test_vllm_finding_the_gpu_partly_taken_at_start_is_gpu_memory(rules):
    line = (
        "ValueError: Free memory on device (3.27/79.19 GiB) on startup is less than desired GPU memory utilization "
        "(0.9, 71.27 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes."
    )
    assert "3.27 of 79.19 GiB" in top(diagnose(rules, [line]), "cuda-oom").detail


def test_nccl_finding_p2p_disabled_between_nvlinked_gpus_is_a_hardware_fault_that_stops_it(rules):
    line = (
        "node017:2231:2231 [0] graph/paths.cc:325 NCCL WARN P2P is disabled between NVLINK connected GPUs 1 and 2. "
        "This should not be the case given their connectivity, and is probably due to a hardware issue."
    )
    finding = top(diagnose(rules, [line]), "gpu-xid")
    assert finding.hosts == ["node017"] and "GPUs 1 and 2" in finding.detail and "NCCL_IGNORE_DISABLED_P2P" in finding.detail


# ------------------------------------------------------------------ session 17: GPU and memory forms
def test_dcgm_memory_health_texts_are_gpu_faults_and_a_pending_remap_is_only_recorded(rules):
    for line in (
        "GPU 3 exceeded uncorrectable row remap limit with 512 remapped rows",
        "Pending page retirements together with a DBE were detected on GPU 3.",
        "Detected 2 volatile double-bit ECC error(s) in GPU 3.",
        "Detected fatal errors on NvSwitch 2 link 44",
    ):
        finding = top(diagnose(rules, [line]), "gpu-xid")
        assert finding.severity == "critical" and "[hardware]" in finding.detail, line
    pending = found(diagnose(rules, ["GPU 3 had memory errors and row remappings are pending"]), "gpu-xid")
    assert pending.severity == "warning" and "[recorded]" in pending.detail


def test_an_unspecified_launch_failure_without_an_xid_stays_under_the_unexplained_failure(rules):
    crash = ["[rank5]: torch.AcceleratorError: CUDA error: unspecified launch failure", "srun: error: n5: task 5: Exited"]
    hint = found(diagnose(rules, crash), "gpu-xid")
    assert hint.severity == "info" and diagnose(rules, crash).findings[0].id == "unexplained-failure"
    # With the driver's Xid beside it, the GPU is the cause.
    xid = "NVRM: Xid (PCI:0000:1b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."
    assert top(diagnose(rules, [*crash, xid]), "gpu-xid").severity == "critical"


def test_xla_s_allocator_giving_up_is_a_gpu_oom_but_its_retry_notice_is_not(rules):
    gave_up = (
        "W1206 05:12:12.448164     640 bfc_allocator.cc:598] Allocator (GPU_0_bfc) ran out of memory trying to "
        "allocate 200.00GiB (rounded to 214748364800) from the lower end requested by op "
    )
    finding = top(diagnose(rules, [gave_up]), "cuda-oom")
    assert finding.severity == "warning" and "200.00GiB" in finding.detail
    failed = "jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 200.02GiB"
    assert top(diagnose(rules, [gave_up, failed]), "cuda-oom").severity == "error"
    retry = (
        "W1206 05:12:12.625258     713 bfc_allocator.cc:371] Allocator (GPU_0_bfc) ran out of memory trying to "
        "allocate 200.02GiB from the lower end with freed_by_count=0. The caller indicates that this is not a "
        "failure, but this may mean that there could be performance gains if more memory were available."
    )
    assert "cuda-oom" not in ids(diagnose(rules, [retry]))


def test_accelerate_s_batch_size_finder_reaching_zero_is_a_gpu_oom(rules):
    report = diagnose(rules, ["RuntimeError: No executable batch size found, reached zero."])
    assert "one sample does not fit" in top(report, "cuda-oom").detail


def test_gpu_memory_running_out_in_lua_torch_and_tensorflow_1x_words(rules):
    for line in [
        "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCTensorRandom.cu line=25 error=2 : out of memory",
        "ResourceExhaustedError (see above for traceback): OOM when allocating tensor of shape [563354,256] and type float",
    ]:
        top(diagnose(rules, [line]), "cuda-oom")


def test_amd_gpus_hang_and_fault_in_rocms_words_as_nvidias_xids_do(rules):
    hang = top(diagnose(rules, ["HW Exception by GPU node-4 (Agent handle: 0x1ebc04e0) reason :GPU Hang"]), "gpu-xid")
    assert hang.severity == "critical" and "GPU Hang" in hang.detail
    fault = (
        "Memory access fault by GPU node-2 (Agent handle: 0x55fea5592860) on address 0x7fc133800000. Reason: Page not "
        "present or supervisor privilege."
    )
    # A page fault is the program's address as often as the GPU's, like Xid 31: a lead, not the verdict.
    assert found(diagnose(rules, [fault]), "gpu-xid").severity == "warning"
    oom = (
        "c05r2n11: RuntimeError: : HIP out of memory. Tried to allocate 576.00 MiB (GPU 2; 15.98 GiB total capacity; "
        "15.83 GiB already allocated; 0 bytes free; 15.84 GiB reserved in total by PyTorch)"
    )
    top(diagnose(rules, [oom]), "cuda-oom")
    tf = (
        "2019-01-08 19:06:11.303639: E tensorflow/stream_executor/rocm/rocm_driver.cc:601] failed to allocate 7.35G "
        "(7889485824 bytes) from device: hipError_t(1002)"
    )
    top(diagnose(rules, [tf]), "cuda-oom")


def test_paddles_allocator_running_out_is_cuda_oom(rules):
    line = ("0223 18:59:36.058634 11348 operator.cc:179] Out of memory error on GPU 0. Cannot allocate 6.933594GB "
            "memory on GPU 0, available memory is only 726.750000MB.")  # fmt: skip
    assert "6.933594GB on GPU 0" in top(diagnose(rules, [line]), "cuda-oom").detail
