"""``graph-kernels device-peaks [--remeasure] [--all] [--json]``: the GPU's measured copy bandwidth
and peak operation rates, kept per device for the roofline (kernels/roofline/peaks.py)."""

from __future__ import annotations

from kernels.cli.common import print_json


def register(sub) -> None:
    p = sub.add_parser("device-peaks", help="this GPU's measured copy bandwidth and peak rates (the roofline's "
                       "limits): shown if kept, else measured once (about 10 s) and kept")
    p.add_argument("--remeasure", action="store_true", help="measure again and replace the kept figures")
    p.add_argument("--all", action="store_true", help="list every device's kept figures (no GPU needed)")
    p.add_argument("--json", action="store_true", help="as JSON")
    p.set_defaults(func=run)


def describe(peaks: dict) -> list[str]:
    from kernels.roofline import OP_KINDS

    dev = peaks.get("device", {})
    lines = [f"{dev.get('name', '?')} ({dev.get('uuid') or 'no UUID'}, driver {dev.get('driver', '?')}), "
             f"measured {peaks.get('measured', '?')}",
             f"  copy bandwidth   {peaks['bandwidth_Bps'] / 1e9:10,.0f} GB/s"]
    for kind, rate in peaks["rates"].items():
        lines.append(f"  {kind:<15}  {rate / 1e9:10,.0f} G/s   ({OP_KINDS.get(kind, kind)})")
    return lines


def run(args) -> int:
    from kernels.errors import TargetUnavailableError
    from kernels.roofline import peaks as kept

    if args.all:
        devices = kept.all_stored()
        if args.json:
            print_json(devices)
        elif not devices:
            print(f"no measured peaks kept in {kept.peaks_file()}")
        else:
            print(f"measured peaks kept in {kept.peaks_file()}:")
            for p in devices.values():
                print("\n".join(describe(p)))
        return 0
    from kernels.measure.environment import device_description
    from kernels.measure.targets import activate

    device = device_description("cuda")
    if kept.device_key(device) is None:
        raise TargetUnavailableError("device-peaks measures a real GPU, and this machine has none "
                                     "(--all lists the figures kept here)")
    activate("cuda")

    def probe() -> dict:
        from kernels.roofline.probes import probe_device

        return probe_device()

    peaks, measured = kept.measure_peaks(device, probe, remeasure=args.remeasure)
    if args.json:
        print_json(peaks)
        return 0
    print("\n".join(describe(peaks)))
    print(f"({'measured now and kept' if measured else 'kept from before; --remeasure measures again'} "
          f"in {kept.peaks_file()})")
    return 0
