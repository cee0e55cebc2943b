"""The anti-hack catalog and its checks: static scan, dynamic checks, runtime guard, launch census,
native audit, memory poisoning."""
