jobs = [tools.get_job(job_id=j) for j in job_ids]
results = await asyncio.gather(*jobs)
return results
