"""What measurements record about the machine (`albert_tf.io.machine`)."""

import os

from albert_tf.io import machine as machine_module


def test_the_machine_names_its_cpu_flags_and_logical_cpus(monkeypatch, tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nmodel name\t: Made-up CPU @ 2.0GHz\n"
                       "flags\t\t: fpu avx512f avx512_bf16\n\nprocessor\t: 1\n"
                       "model name\t: Made-up CPU @ 2.0GHz\n")
    monkeypatch.setattr(machine_module, "CPUINFO", str(cpuinfo))
    assert machine_module.cpu_name() == "Made-up CPU @ 2.0GHz"
    assert machine_module.cpu_flags() == {"fpu", "avx512f", "avx512_bf16"}
    described = machine_module.machine()
    assert described["cpu"] == "Made-up CPU @ 2.0GHz"
    assert described["logical_cpus"] == os.cpu_count() and described["host"]


def test_without_proc_cpuinfo_the_platform_names_the_cpu(monkeypatch, tmp_path):
    monkeypatch.setattr(machine_module, "CPUINFO", str(tmp_path / "missing"))
    monkeypatch.setattr(machine_module.platform, "processor", lambda: "made-up-arch")
    assert machine_module.cpu_name() == "made-up-arch"
    assert machine_module.cpu_flags() == set()
